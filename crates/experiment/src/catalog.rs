//! What an experiment file can name, for `uqformer list`: each registry's entries as rows the
//! command prints, so that it needs none of the crates that define them.

use backbone::{InputKind, PRESETS};
use data::{Corruption, DATASETS, Source};

use crate::base::PRETRAINED;
use crate::methods::KINDS;

/// One name an experiment file can use, what it is, and a note where the section has one
/// (what a pretrained backbone serves, where a data set comes from, the units a criterion
/// scores; empty otherwise).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub name: &'static str,
    pub about: &'static str,
    pub note: String,
}

/// The method kinds (`[[method]] kind = ...`).
pub fn method_kinds() -> Vec<Item> {
    (KINDS.entries().iter())
        .map(|e| item(e.name, e.about, ""))
        .collect()
}

/// The backbone presets (`[backbone] preset = ...`).
pub fn backbone_presets() -> Vec<Item> {
    (PRESETS.entries().iter())
        .map(|e| item(e.name, e.about, ""))
        .collect()
}

/// The pretrained backbones (`[backbone] pretrained = ...`), noted with the data sets they
/// serve.
pub fn pretrained_backbones() -> Vec<Item> {
    (PRETRAINED.entries().iter())
        .map(|p| {
            let serves = match p.item.architecture.reads() {
                InputKind::Images => "image datasets",
                InputKind::Tokens => "text datasets",
            };
            item(p.name, p.about, serves)
        })
        .collect()
}

/// The data sets (`[data] dataset / ood = ...`), noted with where they come from.
pub fn datasets() -> Vec<Item> {
    (DATASETS.entries().iter())
        .map(|set| {
            let source = match set.item.source {
                Source::Bundled => "bundled",
                Source::Fetched => "datasets/fetch",
            };
            item(set.name, set.about, source)
        })
        .collect()
}

/// The shift corruptions' names (`[[data.shift]] corruption = ...`).
pub fn corruptions() -> Vec<&'static str> {
    Corruption::ALL.iter().map(|c| c.name()).collect()
}

/// The pruning criteria (`kind = "hydra"`: `importance = ...`, any that scores heads;
/// `kind = "pruned"`: `criterion = ...`), noted with the unit kinds each scores.
pub fn pruning_criteria() -> Vec<Item> {
    (pruning::CRITERIA.entries().iter())
        .map(|e| item(e.name, e.about, &pruning::listed(e.item.kinds)))
        .collect()
}

fn item(name: &'static str, about: &'static str, note: &str) -> Item {
    Item {
        name,
        about,
        note: note.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registry_entry_is_listed_once_with_its_note() {
        assert_eq!(method_kinds().len(), KINDS.entries().len());
        let criteria = pruning_criteria();
        assert_eq!(criteria.len(), pruning::CRITERIA.entries().len());
        let taylor = criteria.iter().find(|c| c.name == "taylor").unwrap();
        assert_eq!(taylor.note, "head, attention, mlp, gelu, neuron, block");
        let sets = datasets();
        assert_eq!(sets.len(), DATASETS.entries().len());
        assert!(sets.iter().any(|s| s.note == "bundled"));
        assert!(
            sets.iter()
                .all(|s| ["bundled", "datasets/fetch"].contains(&s.note.as_str()))
        );
        let pretrained = pretrained_backbones();
        assert!(pretrained.iter().any(|p| p.note == "text datasets"));
        assert!(pretrained.iter().any(|p| p.note == "image datasets"));
        assert_eq!(corruptions().len(), Corruption::ALL.len());
    }
}
