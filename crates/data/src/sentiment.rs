//! The VADER ground-truth files (Hutto & Gilbert 2014): one example per line,
//! `id <TAB> mean_rating <TAB> text`, the rating a float in [-4, 4]. The binary label is the
//! sign of the rating (1 positive, 0 negative).
//!
//! Decoding: a UTF-8 byte-order mark is skipped, CRLF line ends are accepted, blank lines are
//! skipped, and a line that is not valid UTF-8 is decoded as Latin-1 (every byte is the code
//! point of the same value), which is what these corpora contain when they are not UTF-8 and,
//! unlike lossy decoding, keeps every character.

use std::path::Path;

use crate::dataset::TextDataset;
use crate::error::{DataError, Result};
use crate::file::read_bytes;

const BOM: &[u8] = &[0xef, 0xbb, 0xbf];

/// What to do with rows whose mean rating is exactly 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NeutralRows {
    /// Leave them out (the default: their sign carries no label).
    #[default]
    Drop,
    /// Keep them with label 0.
    AsNegative,
    /// Keep them with label 1.
    AsPositive,
}

/// Reads a VADER ground-truth file (raw or gzip) into a two-class text dataset.
pub fn load_vader_tsv(path: &Path, name: &str, neutral: NeutralRows) -> Result<TextDataset> {
    let bytes = read_bytes(path)?;
    let body = bytes.strip_prefix(BOM).unwrap_or(&bytes);
    let mut texts = Vec::new();
    let mut labels = Vec::new();
    for (i, raw) in body.split(|&b| b == b'\n').enumerate() {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let line = decode(raw);
        let line_no = i + 1;
        let mut fields = line.splitn(3, '\t');
        let (Some(_id), Some(rating), Some(text)) = (fields.next(), fields.next(), fields.next())
        else {
            return Err(DataError::file(
                path,
                format!("line {line_no}: expected `id<TAB>rating<TAB>text`, found {line:?}"),
            ));
        };
        let rating: f64 = rating.trim().parse().map_err(|_| {
            DataError::file(
                path,
                format!("line {line_no}: rating {rating:?} is not a number"),
            )
        })?;
        if !(-4.0..=4.0).contains(&rating) {
            return Err(DataError::file(
                path,
                format!("line {line_no}: rating {rating} is outside [-4, 4]"),
            ));
        }
        let label = if rating > 0.0 {
            1
        } else if rating < 0.0 {
            0
        } else {
            match neutral {
                NeutralRows::Drop => continue,
                NeutralRows::AsNegative => 0,
                NeutralRows::AsPositive => 1,
            }
        };
        texts.push(text.trim().to_string());
        labels.push(label);
    }
    Ok(TextDataset {
        name: name.to_string(),
        texts,
        labels,
        num_classes: 2,
    })
}

fn decode(raw: &[u8]) -> String {
    match std::str::from_utf8(raw) {
        Ok(s) => s.to_string(),
        Err(_) => raw.iter().map(|&b| char::from(b)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tweets_GroundTruth.txt");
        std::fs::write(&path, bytes).unwrap();
        (dir, path)
    }

    #[test]
    fn labels_follow_the_sign_and_neutral_rows_are_configurable() {
        let (_d, p) = write(b"1\t2.7\tGreat day\n2\t-1.5\tBad day\n3\t0\tA day\n4\t0.0\tAnother\n");
        let d = load_vader_tsv(&p, "tweets", NeutralRows::Drop).unwrap();
        assert_eq!(d.texts, vec!["Great day", "Bad day"]);
        assert_eq!(d.labels, vec![1, 0]);
        assert_eq!(d.num_classes, 2);
        let neg = load_vader_tsv(&p, "tweets", NeutralRows::AsNegative).unwrap();
        assert_eq!(neg.labels, vec![1, 0, 0, 0]);
        let pos = load_vader_tsv(&p, "tweets", NeutralRows::AsPositive).unwrap();
        assert_eq!(pos.labels, vec![1, 0, 1, 1]);
    }

    #[test]
    fn bom_crlf_tabs_in_text_and_latin1_are_handled() {
        let mut bytes = BOM.to_vec();
        bytes.extend(b"1\t1.0\tcaf\xe9 au lait\r\n\r\n2\t-3\tone\ttwo\r\n");
        let (_d, p) = write(&bytes);
        let d = load_vader_tsv(&p, "x", NeutralRows::Drop).unwrap();
        assert_eq!(d.texts, vec!["caf\u{e9} au lait", "one\ttwo"]);
        assert_eq!(d.labels, vec![1, 0]);
    }

    #[test]
    fn valid_utf8_is_kept_as_is() {
        let (_d, p) = write("1\t0.5\tna\u{ef}ve \u{1f600}\n".as_bytes());
        let d = load_vader_tsv(&p, "x", NeutralRows::Drop).unwrap();
        assert_eq!(d.texts, vec!["na\u{ef}ve \u{1f600}"]);
    }

    #[test]
    fn malformed_lines_name_file_and_line() {
        for (content, needle) in [
            (&b"1\t1.0\tok\n2\t0.5\n"[..], "line 2"),
            (b"1\t1.0\tok\n\n3\tgood\ttext\n", "line 3"),
            (b"1\t4.5\ttoo high\n", "outside"),
            (b"1\tNaN\tnot a rating\n", "outside"),
        ] {
            let (_d, p) = write(content);
            let err = load_vader_tsv(&p, "x", NeutralRows::Drop)
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("tweets_GroundTruth.txt") && err.contains(needle),
                "{err}"
            );
        }
    }
}
