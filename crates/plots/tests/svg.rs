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

/// The plot area's horizontal extent: the x axis, the longest horizontal black line.
fn x_axis(doc: &roxmltree::Document<'_>) -> (f64, f64) {
    let mut best = (0.0, 0.0);
    for n in doc.descendants().filter(|n| n.has_tag_name("polyline")) {
        let xy: Vec<(f64, f64)> = (n.attribute("points").unwrap_or("").split_whitespace())
            .filter_map(|p| p.split_once(','))
            .map(|(x, y)| (x.parse().unwrap(), y.parse().unwrap()))
            .collect();
        if let [a, b] = xy[..]
            && n.attribute("stroke") == Some("#000000")
            && a.1 == b.1
            && (b.0 - a.0).abs() > best.1 - best.0
        {
            best = (a.0.min(b.0), a.0.max(b.0));
        }
    }
    best
}

/// The x of the text elements that read exactly `wanted`.
fn text_x(doc: &roxmltree::Document<'_>, wanted: &str) -> Vec<f64> {
    (doc.descendants())
        .filter(|n| n.has_tag_name("text") && n.text().map(str::trim) == Some(wanted))
        .map(|n| n.attribute("x").unwrap().parse().unwrap())
        .collect()
}

#[test]
fn a_categorical_axis_is_labelled_by_its_names_alone() {
    let names = ["msp", "energy", "MDS", "RMDS", "ViM", "KNN"];
    let bars = Series::new(
        "m",
        Mark::Bars { width: 0.3 },
        (1..=6)
            .map(|k| Point::new(k as f64, 80.0 + k as f64))
            .collect(),
    );
    let mut f = figure(vec![bars]);
    f.x_categories = names.iter().map(|s| s.to_string()).collect();
    f.y_range = Some((75.0, 90.0));
    f.legend = Legend::None;
    let svg = render(&f, (600, 400)).unwrap();
    let doc = parse(&svg);
    // Every text is the title, an axis label, a y tick (a number) or a category.
    let t = texts(&doc);
    let words: Vec<&String> = (t.iter())
        .filter(|s| {
            s.parse::<f64>().is_err()
                && !["Risk-coverage", "coverage", "risk"].contains(&s.as_str())
        })
        .collect();
    assert_eq!(words, names);
    // The names sit in order left to right, inside the plot area.
    let (left, right) = x_axis(&doc);
    let xs: Vec<f64> = names.iter().map(|n| text_x(&doc, n)[0]).collect();
    assert!(xs.windows(2).all(|w| w[0] < w[1]), "{xs:?}");
    assert!(xs[0] > left && xs[5] < right, "{xs:?} in {left}..{right}");
    // A bar on an axis from 75 starts at the axis, not below it.
    let bottom = (doc.descendants())
        .filter(|n| n.has_tag_name("rect") && n.attribute("fill") != Some("#FFFFFF"))
        .map(|n| {
            let y: f64 = n.attribute("y").unwrap().parse().unwrap();
            y + n.attribute("height").unwrap().parse::<f64>().unwrap()
        })
        .fold(0.0, f64::max);
    assert!(bottom < 400.0 - 40.0, "a bar reaches {bottom}");
}

#[test]
fn an_outside_legend_lies_right_of_the_plot_area() {
    let series = (0..3)
        .map(|k| {
            Series::line(
                format!("method {k}"),
                (0..10).map(|i| (i as f64, (i * k) as f64)),
            )
        })
        .collect();
    let mut f = figure(series);
    f.legend = Legend::Outside;
    let doc_svg = render(&f, (640, 420)).unwrap();
    let doc = parse(&doc_svg);
    let (_, right) = x_axis(&doc);
    for k in 0..3 {
        let xs = text_x(&doc, &format!("method {k}"));
        assert_eq!(xs.len(), 1);
        assert!(
            xs[0] > right,
            "entry at {} inside a plot area ending at {right}",
            xs[0]
        );
    }
    // The same figure with the legend inside: its entries sit over the plot area.
    f.legend = Legend::UpperLeft;
    let inside = render(&f, (640, 420)).unwrap();
    let doc = parse(&inside);
    assert!(text_x(&doc, "method 0")[0] < x_axis(&doc).1);
}

#[test]
fn a_grid_of_outside_legends_shares_one() {
    let panels: Vec<Figure> = (0..4)
        .map(|k| Figure {
            title: format!("panel {k}"),
            legend: Legend::Outside,
            ..figure(vec![
                Series::line("a", [(0.0, 0.0), (1.0, 1.0)]),
                Series::line("b", [(0.0, 1.0), (1.0, 0.0)]),
            ])
        })
        .collect();
    let svg = render_grid(&panels, 2, (300, 250)).unwrap();
    let doc = parse(&svg);
    let width: f64 = doc
        .root_element()
        .attribute("width")
        .unwrap()
        .parse()
        .unwrap();
    assert!(width > 600.0, "the legend widens the grid");
    for name in ["a", "b"] {
        let xs = text_x(&doc, name);
        assert_eq!(xs.len(), 1, "{name} once");
        assert!(xs[0] > 600.0, "{name} right of every panel");
    }
}

#[test]
fn a_reference_is_dashed_and_grey() {
    let mut f = figure(vec![
        Series::line("m", [(0.0, 0.0), (1.0, 1.0)]),
        Series::new(
            "front",
            Mark::Reference,
            vec![
                Point::new(0.0, 1.0),
                Point::new(1.0, 0.5),
                Point::new(2.0, 0.2),
            ],
        ),
    ]);
    f.legend = Legend::Outside;
    let svg = render(&f, (500, 400)).unwrap();
    let doc = parse(&svg);
    // Dashes are short grey segments; the data line stays one polyline.
    let grey = (doc.descendants())
        .filter(|n| n.attribute("stroke") == Some("#6E6E6E"))
        .count();
    assert!(grey > 4, "{grey} grey segments");
    assert!(texts(&doc).iter().any(|t| t == "front"));
}

#[test]
fn labels_of_coinciding_points_do_not_overlap() {
    let labelled = |name: &str, x: f64, y: f64| {
        let mut p = Point::new(x, y);
        p.label = Some(name.to_string());
        Series::new(name, Mark::Points, vec![p])
    };
    let mut f = figure(vec![
        labelled("hydra_taylor", 1.0, 0.5),
        labelled("hydra_circuit", 1.01, 0.501),
        labelled("hydra_random", 0.99, 0.499),
        labelled("single", 3.0, 0.2),
    ]);
    f.legend = Legend::None;
    let svg = render(&f, (600, 400)).unwrap();
    let doc = parse(&svg);
    let boxes: Vec<(f64, f64, f64, f64)> = ["hydra_taylor", "hydra_circuit", "hydra_random"]
        .iter()
        .map(|name| {
            let n = (doc.descendants())
                .find(|n| n.has_tag_name("text") && n.text().map(str::trim) == Some(*name))
                .unwrap();
            let x: f64 = n.attribute("x").unwrap().parse().unwrap();
            let y: f64 = n.attribute("y").unwrap().parse().unwrap();
            (x, y, x + 6.0 * name.len() as f64, y + 11.0)
        })
        .collect();
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            let clash = a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3;
            assert!(!clash, "{a:?} and {b:?} overlap");
        }
    }
}

#[test]
fn the_palette_gives_sixteen_series_distinct_colours() {
    let mut colours = plots::PALETTE.to_vec();
    colours.sort_unstable();
    colours.dedup();
    assert_eq!(colours.len(), 16);
    // Drawn: sixteen lines, sixteen strokes.
    let series = (0..16)
        .map(|k| Series::line(format!("m{k}"), [(0.0, k as f64), (1.0, k as f64 + 0.5)]))
        .collect();
    let svg = render(&figure(series), (600, 400)).unwrap();
    let doc = parse(&svg);
    let mut strokes: Vec<&str> = (doc.descendants())
        .filter(|n| n.has_tag_name("polyline") && n.attribute("stroke-width") == Some("2"))
        .filter_map(|n| n.attribute("stroke"))
        .collect();
    strokes.sort_unstable();
    strokes.dedup();
    assert_eq!(strokes.len(), 16, "{strokes:?}");
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
