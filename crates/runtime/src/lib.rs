//! The runtime under the experiment pipeline: what runs its work without knowing models or
//! methods.
//!
//! - [`pool`]: the program's tensor work on a thread of rayon's pool, and spinning threads for
//!   timed passes; [`memory`]: the peak-heap counter and the allocator's settings.
//! - [`device`]: the compute backends by name ([`Backend`]) and their devices.
//! - [`workers`]: worker processes that take queued [`Job`]s (base models first, then methods
//!   from the back), the main process claiming the rest; the spec a worker is given is the
//!   caller's (`experiment::WorkerSpec`).
//! - [`shard`]: which array task this is ([`Shard`]) and which jobs it takes ([`deal`]).
//! - [`cache`]: the model cache's folders: one lock per folder ([`cache::lock`]), a process's
//!   in-use marks ([`InUse`]), listing and cleaning. What trains into a folder is the
//!   experiment's (`experiment`'s `Trainer`).
//!
//! Errors are [`RuntimeError`]s naming the file or value, the I/O error underneath kept as the
//! source.

pub mod cache;
pub mod device;
mod error;
pub mod memory;
pub mod pool;
pub mod shard;
pub mod workers;

pub use cache::{
    CACHE_KEYS, CacheEntry, Clean, InUse, MadeBy, clean_cache, list_cache, used_by_latest_run,
};
pub use device::Backend;
pub use error::{Result, RuntimeError};
pub use shard::{Shard, deal};
pub use workers::{Job, Workers};
