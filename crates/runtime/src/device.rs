//! The compute device, chosen explicitly by name (never `Device::default()`, which silently
//! prefers a GPU backend).

use burn::tensor::Device;
use registry::{Entry, Registry};
use serde::{Deserialize, Serialize};

use crate::error::RuntimeError;

/// A compute backend, as `[experiment] backend` and `--backend` name it; every one but `flex`
/// needs its cargo feature.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Backend {
    /// CPU, burn-flex.
    #[default]
    Flex,
    Ndarray,
    Wgpu,
    Cuda,
    Tch,
    TchCuda,
}

impl Backend {
    /// Every backend by name (serde's, so the two cannot drift: a test checks it), with what it
    /// runs on and the cargo feature it needs.
    pub const NAMES: Registry<Self> = Registry::new(
        "backend",
        &[
            Entry {
                name: "flex",
                about: "CPU, default (burn-flex)",
                item: Self::Flex,
            },
            Entry {
                name: "ndarray",
                about: "CPU (burn-ndarray); cargo feature `ndarray`",
                item: Self::Ndarray,
            },
            Entry {
                name: "wgpu",
                about: "GPU through wgpu (Vulkan, Metal, DX12; lavapipe on CPU); cargo feature `wgpu`",
                item: Self::Wgpu,
            },
            Entry {
                name: "cuda",
                about: "NVIDIA GPU (burn-cuda); cargo feature `cuda`",
                item: Self::Cuda,
            },
            Entry {
                name: "tch",
                about: "LibTorch's CPU kernels (burn-tch); cargo feature `tch`, a pip-installed torch",
                item: Self::Tch,
            },
            Entry {
                name: "tch-cuda",
                about: "NVIDIA GPU through LibTorch (burn-tch); cargo feature `tch`, torch built for CUDA",
                item: Self::TchCuda,
            },
        ],
    );

    pub const ALL: [Self; 6] = Self::NAMES.values();

    /// Its name in experiment files.
    pub fn name(self) -> &'static str {
        Self::NAMES.entry_of(self).name
    }

    /// What it runs on and the cargo feature it needs, for `uqformer list`.
    pub fn about(self) -> &'static str {
        Self::NAMES.entry_of(self).about
    }

    /// Whether it computes on the CPU, which is one device (`0`) however many cores it has.
    pub fn is_cpu(self) -> bool {
        matches!(self, Self::Flex | Self::Ndarray | Self::Tch)
    }

    /// Its device number `index` (`None`: the default device), or why it cannot be had: a GPU
    /// backend's `index` is the GPU's number (wgpu: among the discrete GPUs); a CPU backend has
    /// only device 0.
    pub fn device_at(self, index: Option<usize>) -> Result<Device, RuntimeError> {
        match index {
            None => self.device(),
            Some(i) if !self.is_cpu() => self.gpu(i),
            Some(0) => self.device(),
            Some(i) => Err(RuntimeError::invalid(format!(
                "device {i}: backend `{self}` runs on one device, the CPU (device 0)"
            ))),
        }
    }

    /// GPU `index` of a GPU backend; one not compiled in says which feature it needs.
    fn gpu(self, index: usize) -> Result<Device, RuntimeError> {
        match self {
            #[cfg(feature = "wgpu")]
            Self::Wgpu => Ok(Device::wgpu(burn::tensor::DeviceKind::DiscreteGpu(index))),
            #[cfg(feature = "cuda")]
            Self::Cuda => Ok(Device::cuda(index)),
            #[cfg(feature = "tch")]
            #[allow(deprecated)]
            Self::TchCuda => Ok(Device::libtorch_cuda(index)),
            _ => {
                let _ = index;
                self.device()
            }
        }
    }

    /// Its default device, or why it cannot be had in this build.
    pub fn device(self) -> Result<Device, RuntimeError> {
        let not_built = |feature: &str| {
            Err(RuntimeError::invalid(format!(
                "backend `{self}` is not compiled into this build; rebuild with `--features \
                 {feature}` (e.g. cargo run --release -p uqformer --features {feature} -- run ...)"
            )))
        };
        match self {
            Self::Flex => Ok(Device::flex()),
            #[cfg(feature = "ndarray")]
            Self::Ndarray => Ok(Device::ndarray()),
            #[cfg(not(feature = "ndarray"))]
            Self::Ndarray => not_built("ndarray"),
            #[cfg(feature = "wgpu")]
            Self::Wgpu => Ok(Device::wgpu(Default::default())),
            #[cfg(not(feature = "wgpu"))]
            Self::Wgpu => not_built("wgpu"),
            #[cfg(feature = "cuda")]
            Self::Cuda => Ok(Device::cuda(0)),
            #[cfg(not(feature = "cuda"))]
            Self::Cuda => not_built("cuda"),
            // burn-tch is deprecated in Burn 0.22.1 but still the only LibTorch route.
            #[cfg(feature = "tch")]
            #[allow(deprecated)]
            Self::Tch => Ok(Device::libtorch()),
            #[cfg(feature = "tch")]
            #[allow(deprecated)]
            Self::TchCuda => Ok(Device::libtorch_cuda(0)),
            #[cfg(not(feature = "tch"))]
            Self::Tch | Self::TchCuda => not_built("tch"),
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// For `--backend` on the command line.
impl std::str::FromStr for Backend {
    type Err = RuntimeError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Ok(Self::NAMES.get(name)?.item)
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

    fn error(backend: Backend) -> String {
        backend.device().expect_err(backend.name()).to_string()
    }

    #[test]
    fn a_backend_missing_from_the_build_names_its_feature() {
        assert!(Backend::Flex.device().is_ok());
        #[cfg(not(feature = "tch"))]
        for backend in [Backend::Tch, Backend::TchCuda] {
            let e = error(backend);
            assert!(
                e.contains(&format!("`{backend}`")) && e.contains("--features tch"),
                "{e}"
            );
        }
        #[cfg(not(feature = "cuda"))]
        assert!(error(Backend::Cuda).contains("--features cuda"));
    }

    #[test]
    fn only_cpu_backends_of_burn_count_on_the_heap() {
        assert!(on_rust_heap(&Device::flex()));
        #[cfg(feature = "tch")]
        assert!(!on_rust_heap(&Backend::Tch.device().unwrap()));
    }

    #[test]
    fn names_are_serdes_and_an_unknown_one_lists_every_valid_one() {
        for backend in Backend::ALL {
            let json = serde_json::to_value(backend).unwrap();
            assert_eq!(json, backend.name(), "serde and name() disagree");
            assert_eq!(backend.name().parse::<Backend>().unwrap(), backend);
        }
        let e = "tpu".parse::<Backend>().unwrap_err().to_string();
        assert!(e.contains("unknown backend `tpu`"), "{e}");
        for backend in Backend::ALL {
            assert!(e.contains(backend.name()), "{backend} missing from: {e}");
        }
    }
}
