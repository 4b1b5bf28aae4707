//! The registered criteria, one file each, and the helpers they share.

pub(crate) mod shared;

pub(crate) mod activation;
pub(crate) mod circuit;
pub(crate) mod confidence;
pub(crate) mod learnable;
pub(crate) mod magnitude;
pub(crate) mod random;
pub(crate) mod taylor;
pub(crate) mod wanda;
