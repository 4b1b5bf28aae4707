//! Configuration checks shared by the efficient ensembles; errors name the field.

use backbone::{BackboneError, ViTConfig};

pub(crate) fn invalid(
    field: &str,
    value: impl std::fmt::Display,
    expected: impl Into<String>,
) -> BackboneError {
    BackboneError::InvalidConfig {
        field: field.to_string(),
        value: value.to_string(),
        expected: expected.into(),
    }
}

pub(crate) fn positive(field: &str, value: usize) -> Result<(), BackboneError> {
    if value == 0 {
        return Err(invalid(field, value, "a positive integer"));
    }
    Ok(())
}

/// The checks `ViTConfig::init` makes, for models that build their own layers from it.
pub(crate) fn vit(config: &ViTConfig) -> Result<(), BackboneError> {
    config.block().check("ViTConfig")?;
    positive("ViTConfig.n_layers", config.n_layers)?;
    positive("ViTConfig.patch_size", config.patch_size)?;
    positive("ViTConfig.channels", config.channels)?;
    positive("ViTConfig.num_classes", config.num_classes)?;
    if config.image_size == 0 || !config.image_size.is_multiple_of(config.patch_size) {
        return Err(invalid(
            "ViTConfig.image_size",
            config.image_size,
            format!("a positive multiple of patch_size = {}", config.patch_size),
        ));
    }
    Ok(())
}
