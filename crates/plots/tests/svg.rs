//! Rendered figures are well-formed SVG holding what the figure describes: a legend entry per
//! series, the axis labels, one drawn path per line series, and a note instead of data where
//! the data is missing.

use plots::{Figure, Legend, Mark, Point, Series, render, render_grid};

fn parse(svg: &str) -> roxmltree::Document<'_> {
    roxmltree::Document::parse(svg).expect("well-formed SVG")
}

fn texts(doc: &roxmltree::Document<'_>) -> Vec<String> {
    (doc.descendants())
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect()
}

/// Polylines with at least `min` points (legend samples have two).
fn polylines(doc: &roxmltree::Document<'_>, min: usize) -> usize {
    (doc.descendants())
        .filter(|n| n.has_tag_name("polyline"))
        .filter(|n| {
            n.attribute("points")
                .is_some_and(|p| p.split_whitespace().count() >= min)
        })
        .count()
}

fn figure(series: Vec<Series>) -> Figure {
    Figure {
        title: "Risk-coverage".into(),
        x_label: "coverage".into(),
        y_label: "risk".into(),
        series,
        ..Figure::default()
    }
}

#[test]
fn lines_have_legend_entries_labels_and_paths() {
    let series = (0..3)
        .map(|k| {
            Series::line(
                format!("method {k}"),
                (0..10).map(|i| (i as f64, (i * k) as f64)),
            )
        })
        .collect();
    let svg = render(&figure(series), (640, 420)).unwrap();
    let doc = parse(&svg);
    let t = texts(&doc);
    for wanted in [
        "Risk-coverage",
        "coverage",
        "risk",
        "method 0",
        "method 1",
        "method 2",
    ] {
        assert!(
            t.iter().any(|s| s == wanted),
            "{wanted:?} missing from {t:?}"
        );
    }
    assert_eq!(polylines(&doc, 10), 3);
    assert_eq!(doc.root_element().attribute("width"), Some("640"));
}

#[test]
fn non_finite_points_are_left_out_and_empty_series_say_so() {
    let good = Series::line(
        "good",
        [
            (0.0, 1.0),
            (f64::NAN, 2.0),
            (2.0, 3.0),
            (3.0, f64::INFINITY),
            (4.0, 2.0),
        ],
    );
    let empty = Series::line("empty", [(f64::NAN, f64::NAN)]);
    let doc_svg = render(&figure(vec![good, empty]), (500, 400)).unwrap();
    let doc = parse(&doc_svg);
    assert!(texts(&doc).iter().any(|s| s == "empty (no data)"));
    // The good series keeps its three finite points (grid lines and legend samples have two);
    // nothing reads "NaN" or "inf".
    assert_eq!(polylines(&doc, 3), 1);
    assert!(!doc_svg.contains("NaN") && !doc_svg.contains("inf"));
}

#[test]
fn a_figure_without_data_carries_its_note() {
    let mut f = figure(vec![Series::line("m", [(f64::NAN, 0.0)])]);
    f.note = Some("no OOD set in this run".into());
    let doc_svg = render(&f, (500, 400)).unwrap();
    let doc = parse(&doc_svg);
    assert!(
        texts(&doc)
            .iter()
            .any(|s| s == "no data: no OOD set in this run")
    );
    let empty = render(&figure(Vec::new()), (500, 400)).unwrap();
    assert!(
        texts(&parse(&empty))
            .iter()
            .any(|s| s == "no data: no data")
    );
}

#[test]
fn bars_points_bands_and_steps() {
    let bars = Series::new(
        "accuracy",
        Mark::Bars { width: 0.1 },
        (0..10)
            .map(|b| Point::new(0.05 + b as f64 / 10.0, b as f64 / 10.0))
            .collect(),
    );
    let gap = Series::new(
        "gap",
        Mark::Outlines { width: 0.1 },
        vec![Point {
            lo: Some(0.5),
            ..Point::new(0.55, 0.6)
        }],
    );
    let band = Series::new(
        "mean ± std",
        Mark::Line,
        (0..5)
            .map(|i| Point::new(i as f64, 1.0).band(0.5, 1.5))
            .collect(),
    );
    let step = Series::new(
        "hist",
        Mark::Step,
        (0..6).map(|i| Point::new(i as f64, 1.0)).collect(),
    );
    let mut labelled = Point::new(2.0, 0.9).band(0.85, 0.95);
    labelled.label = Some("hydra".into());
    labelled.size = Some(6.0);
    let points = Series::new("methods", Mark::Points, vec![labelled]);
    let mut f = figure(vec![bars, gap, band, step, points]);
    f.diagonal = true;
    f.legend = Legend::UpperLeft;
    let svg = render(&f, (600, 400)).unwrap();
    let doc = parse(&svg);
    // 10 accuracy bars, the gap's fill and outline, 2 legend boxes, the white background.
    let rects = doc.descendants().filter(|n| n.has_tag_name("rect")).count();
    assert!(rects >= 15, "{rects} rects");
    assert!(
        doc.descendants().any(|n| n.has_tag_name("polygon")),
        "the band"
    );
    assert!(
        doc.descendants().any(|n| n.has_tag_name("circle")),
        "the point"
    );
    assert!(texts(&doc).iter().any(|s| s == "hydra"));
    // Step over 6 points: 2 * 5 + 1 vertices.
    assert!(polylines(&doc, 11) >= 1);
}

#[test]
fn a_one_point_line_is_marked() {
    let f = figure(vec![
        Series::line("one epoch", [(1.0, 0.5)]),
        Series::line("two", [(1.0, 0.4), (2.0, 0.3)]),
    ]);
    let doc_svg = render(&f, (500, 400)).unwrap();
    let circles = parse(&doc_svg)
        .descendants()
        .filter(|n| n.has_tag_name("circle"))
        .count();
    assert_eq!(circles, 1);
}

#[test]
fn a_grid_holds_every_panel() {
    let panels: Vec<Figure> = (0..5)
        .map(|k| Figure {
            title: format!("panel {k}"),
            ..figure(vec![Series::line("m", [(0.0, 0.0), (1.0, 1.0)])])
        })
        .collect();
    let svg = render_grid(&panels, 3, (300, 250)).unwrap();
    let doc = parse(&svg);
    assert_eq!(doc.root_element().attribute("width"), Some("900"));
    assert_eq!(doc.root_element().attribute("height"), Some("500"));
    let t = texts(&doc);
    assert!((0..5).all(|k| t.contains(&format!("panel {k}"))));
}

#[test]
fn a_dashed_line_is_drawn_in_pieces_and_unnamed_has_no_legend_entry() {
    let across = || Series::line("", [(0.0, 0.0), (1.0, 1.0)]);
    let solid = Series {
        name: "training".into(),
        ..across()
    };
    let dashed = Series {
        mark: Mark::Dashed,
        ..across()
    };
    let svg = render(&figure(vec![solid, dashed.clone()]), (400, 300)).unwrap();
    let doc = parse(&svg);
    let legend: Vec<String> = texts(&doc)
        .into_iter()
        .filter(|t| t == "training" || t.is_empty())
        .collect();
    assert_eq!(legend, ["training"]);
    // The diagonal across the plot in dashes of 6 px with gaps of 4: dozens of pieces.
    let alone = parse(&render(&figure(vec![dashed.clone()]), (400, 300)).unwrap())
        .descendants()
        .count();
    let empty = parse(&render(&figure(vec![]), (400, 300)).unwrap())
        .descendants()
        .count();
    assert!(
        alone > empty + 20,
        "{alone} elements with the dashed line, {empty} without"
    );
    // A lone point is a ring: one more circle than without it.
    let lone = Series {
        points: vec![Point::new(0.5, 0.5)],
        ..dashed
    };
    let circles = |svg: &str| {
        parse(svg)
            .descendants()
            .filter(|n| n.has_tag_name("circle"))
            .count()
    };
    let without = circles(&render(&figure(vec![]), (400, 300)).unwrap());
    assert_eq!(
        circles(&render(&figure(vec![lone]), (400, 300)).unwrap()),
        without + 1
    );
}
