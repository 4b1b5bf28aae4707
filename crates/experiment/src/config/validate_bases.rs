//! Methods built on other methods (`base = "<method name>"`): the base exists, comes earlier in
//! the file (so the methods are built in the file's order and no circle of bases can form),
//! gives a model to build on, and the method can be built on one.

use super::experiment::ExperimentConfig;
use crate::error::ConfigError;

impl ExperimentConfig {
    pub(super) fn validate_bases(&self) -> Result<(), ConfigError> {
        let setting = self.setting();
        for (i, m) in self.methods.iter().enumerate() {
            let Some(base) = &m.base else {
                continue;
            };
            let refuse = |why: String| {
                Err(ConfigError::msg(format!(
                    "method `{}`: base = \"{base}\": {why}",
                    m.name
                )))
            };
            let Some(j) = self.methods.iter().position(|b| &b.name == base) else {
                let names: Vec<&str> = self.methods.iter().map(|b| b.name.as_str()).collect();
                return refuse(format!(
                    "no [[method]] has that name; the methods are {names:?}"
                ));
            };
            if j >= i {
                return refuse(format!(
                    "method `{base}` is not declared before `{}`: a method's base comes first \
                     in the file, so methods are built in order and no circle of bases forms",
                    m.name
                ));
            }
            let b = &self.methods[j];
            if let Err(why) = b.method.offers_model() {
                return refuse(format!(
                    "method `{base}` (kind `{}`) cannot be built on: {why}",
                    b.kind
                ));
            }
            if let Err(why) = m.method.builds_on_models(&setting) {
                return refuse(format!(
                    "method `{}` (kind `{}`) cannot be built on another method's model: {why}",
                    m.name, m.kind
                ));
            }
        }
        Ok(())
    }
}
