//! The compute device, chosen explicitly by name (never `Device::default()`, which silently
//! prefers a GPU backend).

use burn::tensor::Device;

use crate::error::ExperimentError;

/// Backend names and the cargo feature each needs.
pub const BACKENDS: &[(&str, &str)] = &[
    ("flex", "CPU, default (burn-flex)"),
    ("ndarray", "CPU (burn-ndarray); cargo feature `ndarray`"),
    (
        "wgpu",
        "GPU through wgpu (Vulkan, Metal, DX12; lavapipe on CPU); cargo feature `wgpu`",
    ),
    ("cuda", "NVIDIA GPU (burn-cuda); cargo feature `cuda`"),
    (
        "tch",
        "LibTorch's CPU kernels (burn-tch); cargo feature `tch`, a pip-installed torch",
    ),
    (
        "tch-cuda",
        "NVIDIA GPU through LibTorch (burn-tch); cargo feature `tch`, torch built for CUDA",
    ),
];

/// The device for a backend name, or why it cannot be had in this build.
pub fn device(name: &str) -> Result<Device, ExperimentError> {
    let not_built = |feature: &str| {
        Err(ExperimentError::invalid(format!(
            "backend `{name}` is not compiled into this build; rebuild with `--features {feature}` \
             (e.g. cargo run --release -p uqformer --features {feature} -- run ...)"
        )))
    };
    match name {
        "flex" => Ok(Device::flex()),
        #[cfg(feature = "ndarray")]
        "ndarray" => Ok(Device::ndarray()),
        #[cfg(not(feature = "ndarray"))]
        "ndarray" => not_built("ndarray"),
        #[cfg(feature = "wgpu")]
        "wgpu" => Ok(Device::wgpu(Default::default())),
        #[cfg(not(feature = "wgpu"))]
        "wgpu" => not_built("wgpu"),
        #[cfg(feature = "cuda")]
        "cuda" => Ok(Device::cuda(0)),
        #[cfg(not(feature = "cuda"))]
        "cuda" => not_built("cuda"),
        // burn-tch is deprecated in Burn 0.22.1 but still the only LibTorch route.
        #[cfg(feature = "tch")]
        #[allow(deprecated)]
        "tch" => Ok(Device::libtorch()),
        #[cfg(feature = "tch")]
        #[allow(deprecated)]
        "tch-cuda" => Ok(Device::libtorch_cuda(0)),
        #[cfg(not(feature = "tch"))]
        "tch" | "tch-cuda" => not_built("tch"),
        other => {
            let names: Vec<_> = BACKENDS.iter().map(|(n, _)| *n).collect();
            Err(ExperimentError::invalid(format!(
                "unknown backend `{other}`; valid backends: {}",
                names.join(", ")
            )))
        }
    }
}

/// Whether `device` keeps its tensors on this process's Rust heap (flex, ndarray), where
/// [`crate::memory::PeakAlloc`] counts them; LibTorch and the GPU backends allocate elsewhere, so
/// their peak memory is not measured.
pub fn on_rust_heap(device: &Device) -> bool {
    #[cfg(feature = "ndarray")]
    if *device == Device::ndarray() {
        return true;
    }
    *device == Device::flex()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(name: &str) -> String {
        device(name).expect_err(name).to_string()
    }

    #[test]
    fn a_backend_missing_from_the_build_names_its_feature() {
        assert!(device("flex").is_ok());
        #[cfg(not(feature = "tch"))]
        for name in ["tch", "tch-cuda"] {
            let e = error(name);
            assert!(
                e.contains(&format!("`{name}`")) && e.contains("--features tch"),
                "{e}"
            );
        }
        #[cfg(not(feature = "cuda"))]
        assert!(error("cuda").contains("--features cuda"));
    }

    #[test]
    fn only_cpu_backends_of_burn_count_on_the_heap() {
        assert!(on_rust_heap(&Device::flex()));
        #[cfg(feature = "tch")]
        assert!(!on_rust_heap(&device("tch").unwrap()));
    }

    #[test]
    fn an_unknown_backend_lists_every_valid_one() {
        let e = error("tpu");
        assert!(e.contains("unknown backend `tpu`"), "{e}");
        for (name, _) in BACKENDS {
            assert!(e.contains(name), "{name} missing from: {e}");
        }
    }
}
