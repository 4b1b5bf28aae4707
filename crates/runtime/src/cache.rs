//! The model cache's folders, apart from what trains into them: one lock per folder for the
//! processes and machines sharing the cache ([`lock`]), the in-use marks of a running process
//! ([`InUse`]), and the cache as a whole for `uqformer cache` (listing, cleaning).

pub mod lock;
mod manage;
mod marks;

pub use manage::{
    CACHE_KEYS, CacheEntry, Clean, MadeBy, clean_cache, list_cache, used_by_latest_run,
};
pub use marks::InUse;
