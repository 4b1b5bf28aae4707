//! Series colours: Okabe and Ito's colour-blind-safe set (black moved last, the yellow darkened
//! to read on white), then eight more, distinct from them and from each other, so that a
//! comparison of up to 16 methods gives every method its own colour.

/// RGB colours, in the order series get them.
pub const PALETTE: [(u8, u8, u8); 16] = [
    (0, 114, 178),   // blue
    (230, 159, 0),   // orange
    (0, 158, 115),   // bluish green
    (213, 94, 0),    // vermillion
    (204, 121, 167), // reddish purple
    (86, 180, 233),  // sky blue
    (190, 160, 0),   // dark yellow
    (0, 0, 0),       // black
    (136, 34, 85),   // wine
    (51, 34, 136),   // indigo
    (153, 153, 51),  // olive
    (120, 120, 120), // grey
    (140, 81, 10),   // brown
    (17, 119, 51),   // dark green
    (238, 102, 119), // rose
    (150, 150, 230), // periwinkle
];
