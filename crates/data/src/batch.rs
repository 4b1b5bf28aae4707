//! Mini-batch index plans with per-epoch seeded shuffling, and seeded image augmentation.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, RngExt, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::error::{DataError, Result};
use crate::seed::mix;

/// Epoch `e` shuffles with stream `e + SHUFFLE_STREAMS` of the seed: the offset at which
/// [`mix`] gives exactly the orders of the shuffle's former own mixer (`seed ^ (e + 1)·φ`), so
/// cached checkpoints and reference runs keep their batch order.
const SHUFFLE_STREAMS: u64 = 0x0587_e91e_8bc6_0ddc;

/// How to cut `0..n` into mini-batches each epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchPlan {
    n: usize,
    batch_size: usize,
    shuffle: Option<u64>,
    drop_last: bool,
}

impl BatchPlan {
    /// `shuffle: Some(seed)` reorders every epoch from (seed, epoch); `None` keeps index order.
    /// `drop_last` leaves out a final batch smaller than `batch_size`.
    pub fn new(n: usize, batch_size: usize, shuffle: Option<u64>, drop_last: bool) -> Result<Self> {
        if batch_size == 0 {
            return Err(DataError::invalid("batch size must be positive, got 0"));
        }
        Ok(Self {
            n,
            batch_size,
            shuffle,
            drop_last,
        })
    }

    /// Number of batches per epoch.
    pub fn num_batches(&self) -> usize {
        if self.drop_last {
            self.n / self.batch_size
        } else {
            self.n.div_ceil(self.batch_size)
        }
    }

    /// The batches of epoch `epoch`.
    pub fn epoch(&self, epoch: u64) -> Batches {
        let mut order: Vec<usize> = (0..self.n).collect();
        if let Some(seed) = self.shuffle {
            order.shuffle(&mut StdRng::seed_from_u64(mix(
                seed,
                epoch.wrapping_add(SHUFFLE_STREAMS),
            )));
        }
        Batches {
            order,
            batch_size: self.batch_size,
            next: 0,
            remaining: self.num_batches(),
        }
    }
}

/// Iterator over one epoch's batches of indices.
#[derive(Debug, Clone)]
pub struct Batches {
    order: Vec<usize>,
    batch_size: usize,
    next: usize,
    remaining: usize,
}

impl Iterator for Batches {
    type Item = Vec<usize>;

    fn next(&mut self) -> Option<Vec<usize>> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let end = (self.next + self.batch_size).min(self.order.len());
        let batch = self.order[self.next..end].to_vec();
        self.next = end;
        Some(batch)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Batches {}

/// Training-time augmentation of `[C, H, W]` float images.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AugmentConfig {
    /// Random crop of the original size from the image zero-padded by `pad` on every side
    /// (0 disables).
    pub pad: usize,
    /// Mirror left-right with probability 1/2 (leave off for digits and text-like images).
    pub hflip: bool,
}

/// Applies a random crop and flip (as configured) to one image in place. The same offsets and
/// flip apply to every channel.
pub fn augment<R: Rng + ?Sized>(
    image: &mut [f32],
    dims: [usize; 3],
    config: &AugmentConfig,
    rng: &mut R,
) -> Result<()> {
    let [c, h, w] = dims;
    if image.len() != c * h * w {
        return Err(DataError::invalid(format!(
            "image buffer has {} values, dims {dims:?} need {}",
            image.len(),
            c * h * w
        )));
    }
    let p = config.pad;
    let (dy, dx) = if p > 0 {
        (rng.random_range(0..=2 * p), rng.random_range(0..=2 * p))
    } else {
        (0, 0)
    };
    let flip = config.hflip && rng.random_bool(0.5);
    if (dy, dx) == (p, p) && !flip {
        return Ok(());
    }
    let src = image.to_vec();
    for ch in 0..c {
        for y in 0..h {
            for x in 0..w {
                let xc = if flip { w - 1 - x } else { x };
                // Position in the unpadded image; out of range means padding.
                let sy = (y + dy).checked_sub(p).filter(|&v| v < h);
                let sx = (xc + dx).checked_sub(p).filter(|&v| v < w);
                image[(ch * h + y) * w + x] = match (sy, sx) {
                    (Some(sy), Some(sx)) => src[(ch * h + sy) * w + sx],
                    _ => 0.0,
                };
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unshuffled_batches_cover_in_order_with_and_without_the_tail() {
        let plan = BatchPlan::new(7, 3, None, false).unwrap();
        let all: Vec<_> = plan.epoch(0).collect();
        assert_eq!(all, vec![vec![0, 1, 2], vec![3, 4, 5], vec![6]]);
        assert_eq!(plan.num_batches(), 3);
        let dropped: Vec<_> = BatchPlan::new(7, 3, None, true).unwrap().epoch(5).collect();
        assert_eq!(dropped, vec![vec![0, 1, 2], vec![3, 4, 5]]);
        assert_eq!(
            BatchPlan::new(2, 3, None, true).unwrap().epoch(0).count(),
            0
        );
        assert!(BatchPlan::new(2, 0, None, false).is_err());
    }

    #[test]
    fn shuffled_epochs_are_permutations_fixed_by_seed_and_epoch() {
        let plan = BatchPlan::new(50, 8, Some(11), false).unwrap();
        let flat = |e| plan.epoch(e).flatten().collect::<Vec<_>>();
        let e0 = flat(0);
        let mut sorted = e0.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>());
        assert_eq!(flat(0), e0);
        assert_ne!(flat(1), e0);
        let other = BatchPlan::new(50, 8, Some(12), false).unwrap();
        assert_ne!(other.epoch(0).flatten().collect::<Vec<_>>(), e0);
        assert_eq!(plan.epoch(0).len(), 7);
    }

    #[test]
    fn shuffle_streams_reproduce_the_former_mixer() {
        // The shuffle's own mixer before it was unified with `mix`, written out independently.
        let former = |seed: u64, epoch: u64| {
            let mut z = seed ^ epoch.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        for seed in [0, 1, 11, 12_345, u64::MAX] {
            for epoch in 0..40u64 {
                assert_eq!(
                    mix(seed, epoch.wrapping_add(SHUFFLE_STREAMS)),
                    former(seed, epoch)
                );
            }
        }
    }

    /// Reference: the image zero-padded by `p`, cropped at (dy, dx), optionally mirrored.
    fn reference(
        src: &[f32],
        [c, h, w]: [usize; 3],
        p: usize,
        dy: usize,
        dx: usize,
        flip: bool,
    ) -> Vec<f32> {
        let (ph, pw) = (h + 2 * p, w + 2 * p);
        let mut padded = vec![0.0; c * ph * pw];
        for ch in 0..c {
            for y in 0..h {
                for x in 0..w {
                    padded[(ch * ph + y + p) * pw + x + p] = src[(ch * h + y) * w + x];
                }
            }
        }
        let mut out = Vec::with_capacity(c * h * w);
        for ch in 0..c {
            for y in 0..h {
                let row: Vec<f32> = (0..w)
                    .map(|x| padded[(ch * ph + y + dy) * pw + x + dx])
                    .collect();
                if flip {
                    out.extend(row.into_iter().rev());
                } else {
                    out.extend(row);
                }
            }
        }
        out
    }

    #[test]
    fn augment_is_a_padded_crop_and_flip_and_reaches_every_offset() {
        let dims = [2, 3, 4];
        let src: Vec<f32> = (1..=24).map(|v| v as f32).collect();
        let config = AugmentConfig {
            pad: 1,
            hflip: true,
        };
        let mut rng = StdRng::seed_from_u64(5);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..400 {
            let mut img = src.clone();
            augment(&mut img, dims, &config, &mut rng).unwrap();
            let matched: Vec<_> = (0..3)
                .flat_map(|dy| (0..3).flat_map(move |dx| [(dy, dx, false), (dy, dx, true)]))
                .filter(|&(dy, dx, f)| reference(&src, dims, 1, dy, dx, f) == img)
                .collect();
            assert_eq!(matched.len(), 1, "not a unique crop/flip: {img:?}");
            seen.insert(matched[0]);
        }
        assert_eq!(seen.len(), 18);
    }

    #[test]
    fn disabled_augmentation_is_the_identity_and_sizes_are_checked() {
        let mut rng = StdRng::seed_from_u64(0);
        let mut img: Vec<f32> = (0..12).map(|v| v as f32).collect();
        augment(&mut img, [1, 3, 4], &AugmentConfig::default(), &mut rng).unwrap();
        assert_eq!(img, (0..12).map(|v| v as f32).collect::<Vec<_>>());
        assert!(augment(&mut img, [1, 3, 3], &AugmentConfig::default(), &mut rng).is_err());
    }
}
