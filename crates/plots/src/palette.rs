//! Series colours: Okabe and Ito's colour-blind-safe set (black moved last, the yellow darkened
//! to read on white), then four more, distinct from them, for larger comparisons.

/// RGB colours, in the order series get them.
pub const PALETTE: [(u8, u8, u8); 12] = [
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
];
