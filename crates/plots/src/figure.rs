//! What a figure shows: plain numbers, no drawing.

/// One chart: title, axes and series.
#[derive(Debug, Clone, Default)]
pub struct Figure {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// Fixed axis ranges; otherwise the finite data's extent, padded.
    pub x_range: Option<(f64, f64)>,
    pub y_range: Option<(f64, f64)>,
    /// A dotted `y = x` reference line (reliability, predicted vs measured).
    pub diagonal: bool,
    pub legend: Legend,
    /// Names of the x positions 1, 2, ..., n: a categorical axis labelled by name, with no
    /// numeric ticks between them. Empty for a numeric axis.
    pub x_categories: Vec<String>,
    pub series: Vec<Series>,
    /// Shown in the plot area when there is no data to draw (why it is missing).
    pub note: Option<String>,
}

/// Where the legend goes; `None` draws no legend.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Legend {
    #[default]
    UpperRight,
    UpperLeft,
    LowerRight,
    LowerLeft,
    /// Right of the plot area, where it can hide no data. In a grid whose panels all ask for
    /// it, one legend right of the grid serves every panel (entries merged by name).
    Outside,
    None,
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mark {
    /// Points joined in order (a lone point is marked); a point's `lo`/`hi` draw a shaded
    /// band.
    Line,
    /// A step function: each point's `y` holds from its `x` to the next point's `x`.
    Step,
    /// Bars from `lo` (0 when unset) to `y`, `width` wide in data units, centred on `x`.
    Bars { width: f64 },
    /// As `Bars`, but outlined over a faint fill, so that they read over other bars (a
    /// reliability diagram's gaps).
    Outlines { width: f64 },
    /// Circles (radius from `size`, in pixels), with `lo`/`hi` as error bars and `label` as
    /// text beside the point, placed where it overlaps no other label or point if it can.
    Points,
    /// A dashed grey line through the points in order, drawn under the data: a reference
    /// such as a Pareto front, which no palette colour should be mistaken for a method.
    Reference,
    /// As `Line`, dashed and without a band, a lone point a ring: a second measure of the same
    /// thing beside a solid line of its colour (a validation curve beside its training curve).
    Dashed,
}

/// One data point; only `x` and `y` are required.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    pub size: Option<f64>,
    pub label: Option<String>,
}

impl Point {
    pub fn new(x: f64, y: f64) -> Self {
        Self {
            x,
            y,
            ..Self::default()
        }
    }

    /// The point with a band or error bar from `lo` to `hi`.
    pub fn band(mut self, lo: f64, hi: f64) -> Self {
        (self.lo, self.hi) = (Some(lo), Some(hi));
        self
    }

    pub fn finite(&self) -> bool {
        self.x.is_finite() && self.y.is_finite()
    }
}

/// A named sequence of points with its look; a series named `""` has no legend entry (one
/// that another series of its colour names).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub mark: Mark,
    pub points: Vec<Point>,
    /// Index into [`PALETTE`](crate::PALETTE) (taken modulo its length); by default the
    /// series' position in the figure.
    pub colour: Option<usize>,
}

impl Series {
    pub fn new(name: impl Into<String>, mark: Mark, points: Vec<Point>) -> Self {
        Self {
            name: name.into(),
            mark,
            points,
            colour: None,
        }
    }

    /// A line through `(x, y)` pairs.
    pub fn line(name: impl Into<String>, xy: impl IntoIterator<Item = (f64, f64)>) -> Self {
        Self::new(
            name,
            Mark::Line,
            xy.into_iter().map(|(x, y)| Point::new(x, y)).collect(),
        )
    }

    pub fn colour(mut self, index: usize) -> Self {
        self.colour = Some(index);
        self
    }

    /// The points that can be drawn (finite `x` and `y`).
    pub fn drawable(&self) -> impl Iterator<Item = &Point> {
        self.points.iter().filter(|p| p.finite())
    }

    pub fn has_data(&self) -> bool {
        self.drawable().next().is_some()
    }
}
