//! Text classification sets from CSV, TSV and JSON lines: quoting, label kinds, and errors
//! that name the file, the row or line, and the column or field.

use std::path::{Path, PathBuf};

use data::{TextColumns, load_text_table};

fn columns(text: &str, label: &str) -> TextColumns {
    TextColumns {
        text: text.into(),
        label: label.into(),
    }
}

fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path
}

#[test]
fn csv_quoted_commas_quotes_and_line_breaks_stay_in_the_text() {
    let dir = tempfile::tempdir().unwrap();
    let body = "id,sentence,sentiment\n\
                1,\"good, very good\",pos\n\
                2,\"two\nlines\",neg\n\
                3,\"say \"\"hi\"\"\",neutral\n\
                4,plain,pos\n";
    let path = write(dir.path(), "reviews.csv", body);
    let read = load_text_table(&path, &columns("sentence", "sentiment"), "reviews").unwrap();
    assert_eq!(
        read.set.texts,
        ["good, very good", "two\nlines", "say \"hi\"", "plain"]
    );
    // Class names sorted; each label its position.
    assert_eq!(read.classes, ["neg", "neutral", "pos"]);
    assert_eq!(read.set.labels, [2, 0, 1, 2]);
    assert_eq!(
        (read.set.name.as_str(), read.set.num_classes),
        ("reviews", 3)
    );
}

#[test]
fn integer_labels_are_class_indices_and_tsv_takes_quotes_literally() {
    let dir = tempfile::tempdir().unwrap();
    // GLUE's SST-2 layout: tab-separated, quotes are part of the text.
    let path = write(
        dir.path(),
        "train.tsv",
        "sentence\tlabel\nit 's \"fine\t1\nbad \t0\nok\t3\n",
    );
    let read = load_text_table(&path, &columns("sentence", "label"), "sst2").unwrap();
    assert_eq!(read.set.texts, ["it 's \"fine", "bad ", "ok"]);
    assert_eq!(read.set.labels, [1, 0, 3]);
    assert_eq!(read.classes, ["0", "1", "2", "3"]);
    assert_eq!(read.set.num_classes, 4);
}

#[test]
fn json_lines_take_string_or_integer_labels_and_skip_blank_lines() {
    let dir = tempfile::tempdir().unwrap();
    let body =
        "{\"text\": \"a, b\", \"y\": 1}\n\n{\"y\": 0, \"text\": \"c\\nd\", \"extra\": [1]}\n";
    let path = write(dir.path(), "set.jsonl", body);
    let read = load_text_table(&path, &columns("text", "y"), "j").unwrap();
    assert_eq!(
        (read.set.texts.clone(), read.set.labels.clone()),
        (vec!["a, b".to_string(), "c\nd".into()], vec![1, 0])
    );
    let path = write(
        dir.path(),
        "names.jsonl",
        "{\"t\": \"x\", \"l\": \"spam\"}\n{\"t\": \"y\", \"l\": \"ham\"}\n",
    );
    let read = load_text_table(&path, &columns("t", "l"), "j").unwrap();
    assert_eq!(
        (read.classes.clone(), read.set.labels.clone()),
        (vec!["ham".to_string(), "spam".into()], vec![1, 0])
    );
}

/// The error message of reading `body` as `name` with columns `text` / `label`.
fn error(name: &str, body: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), name, body);
    let err = load_text_table(&path, &columns("text", "label"), "x").unwrap_err();
    assert_eq!(err.path.as_deref(), Some(path.as_path()));
    data::error_chain(&err)
}

#[test]
fn bad_labels_name_the_row_and_field() {
    let err = error("a.csv", "text,label\nx,1\ny,2\nz,pos\n");
    assert!(
        err.contains(
            "row 3 (line 4), column \"label\": label \"pos\" is not a non-negative integer"
        ),
        "{err}"
    );
    assert!(err.contains("row 1 (line 2)"), "{err}");
    let err = error("a.csv", "text,label\nx,1\ny,-1\n");
    assert!(
        err.contains("row 2 (line 3)") && err.contains("\"-1\""),
        "{err}"
    );
    let err = error("a.csv", "text,label\n\"x\ny\",\nz,0\n");
    assert!(
        err.contains("row 1 (line 2), column \"label\": empty label"),
        "{err}"
    );
    let err = error(
        "a.jsonl",
        "{\"text\": \"x\", \"label\": 0}\n{\"text\": \"y\", \"label\": 1.5}\n",
    );
    assert!(
        err.contains("line 2, field \"label\": label \"1.5\""),
        "{err}"
    );
    let err = error("a.jsonl", "{\"text\": \"x\", \"label\": true}\n");
    assert!(
        err.contains(
            "line 1, field \"label\": expected a non-negative integer or a class name, found true"
        ),
        "{err}"
    );
    let err = error("a.jsonl", "{\"text\": 3, \"label\": 0}\n");
    assert!(
        err.contains("line 1, field \"text\": expected a string, found 3"),
        "{err}"
    );
}

#[test]
fn missing_columns_and_malformed_rows_are_named() {
    let err = error("a.csv", "sentence,label\nx,1\n");
    assert!(
        err.contains(
            "no column \"text\" in the header row; its columns: [\"sentence\", \"label\"]"
        ),
        "{err}"
    );
    let err = error("a.csv", "text,label\nx,1\ny,1,extra\n");
    assert!(err.contains("a.csv: row 2"), "{err}");
    let err = error(
        "a.jsonl",
        "{\"text\": \"x\", \"label\": 0}\n\n{\"text\": \"y\"}\n",
    );
    assert!(err.contains("line 3: no field \"label\""), "{err}");
    let err = error("a.jsonl", "{\"text\": \"x\", \"label\": 0}\n{oops\n");
    assert!(err.contains("line 2: invalid JSON"), "{err}");
    let err = error("a.txt", "text,label\n");
    assert!(
        err.contains("expected a .csv, .tsv, .jsonl or .ndjson file"),
        "{err}"
    );
}
