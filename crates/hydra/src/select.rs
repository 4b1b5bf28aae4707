//! Member construction: which heads each member keeps (seeded Gumbel-top-k on its head
//! scores), how closely a member follows its scores ([`topk_share`]), and the global ranking
//! of the pruning analysis (heads dropped by score over the whole model, [`prune_ratio`]).

mod choose;
mod head_set;
mod plan;
mod share;

pub use choose::{prune_ratio, select_heads};
pub use head_set::{HeadSet, Keep};
pub use plan::{MemberPlan, SelectConfig, plan_members};
pub use share::{head_jaccard, mean_topk_share, share_in_top, topk_share};
