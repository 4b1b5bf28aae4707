//! Named devices for `uqformer plan --device`: peak dense throughput per precision and memory,
//! from the vendors' datasheets, and the share of that peak a run is assumed to reach.
//!
//! Sources (dense figures: the datasheets print TF32 and BF16 "with sparsity", twice these):
//! - H100 SXM5 80 GB: NVIDIA H100 Tensor Core GPU datasheet (FP32 67, TF32 989 sparse, BF16 1,979
//!   sparse TFLOPS; 80 GB);
//! - H200 SXM 141 GB: NVIDIA H200 Tensor Core GPU datasheet (the H100's compute; 141 GB);
//! - A100 SXM4 80 GB: NVIDIA A100 Tensor Core GPU datasheet (FP32 19.5, TF32 312 sparse, BF16 624
//!   sparse TFLOPS; 80 GB);
//! - L4 24 GB: NVIDIA L4 Tensor Core GPU datasheet (FP32 30.3, TF32 120 sparse, BF16 242 sparse
//!   TFLOPS; 24 GB);
//! - `cpu`: no datasheet; an assumed 16-core AVX-512 server at 2 GHz, two FMA units a core:
//!   16 × 2 × 16 lanes × 2 FLOPs × 2 GHz = 2.05 TFLOPS in f32 and bf16 alike (no AMX), 128 GB.

use std::str::FromStr;

use serde::Serialize;

use crate::error::ExperimentError;

/// The precision matmuls run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    /// IEEE f32 without tensor cores (LibTorch's default for f32 matmuls).
    F32,
    /// f32 storage, TF32 tensor-core matmuls.
    Tf32,
    Bf16,
}

impl Precision {
    /// As `--precision` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Self::F32 => "f32",
            Self::Tf32 => "tf32",
            Self::Bf16 => "bf16",
        }
    }
}

impl FromStr for Precision {
    type Err = ExperimentError;

    fn from_str(s: &str) -> Result<Self, ExperimentError> {
        match s {
            "f32" => Ok(Self::F32),
            "tf32" => Ok(Self::Tf32),
            "bf16" => Ok(Self::Bf16),
            other => Err(ExperimentError::invalid(format!(
                "--precision {other}: expected f32, tf32 or bf16"
            ))),
        }
    }
}

/// A device's datasheet figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DeviceSpec {
    pub name: &'static str,
    pub about: &'static str,
    /// Peak dense TFLOPS in f32, TF32 and bf16.
    pub tflops: [f64; 3],
    /// Memory in GB (10⁹ bytes, as datasheets count).
    pub memory_gb: f64,
    /// The share of the peak a run is assumed to sustain.
    pub utilisation: f64,
}

/// The share of a GPU's peak assumed sustained: 0.4, a middle figure for transformer training
/// (large language-model trainings report 40-55% model FLOPs utilisation; ViT-B and BERT-base
/// at batch 128-256 sit lower, data loading and small kernels included). A measured run
/// (`uqformer run` records latency) is the figure to trust.
const GPU_UTILISATION: f64 = 0.4;

/// The named devices.
pub const DEVICES: &[DeviceSpec] = &[
    DeviceSpec {
        name: "h100",
        about: "NVIDIA H100 SXM5 80 GB",
        tflops: [67.0, 494.5, 989.5],
        memory_gb: 80.0,
        utilisation: GPU_UTILISATION,
    },
    DeviceSpec {
        name: "h200",
        about: "NVIDIA H200 SXM 141 GB",
        tflops: [67.0, 494.5, 989.5],
        memory_gb: 141.0,
        utilisation: GPU_UTILISATION,
    },
    DeviceSpec {
        name: "a100",
        about: "NVIDIA A100 SXM4 80 GB",
        tflops: [19.5, 156.0, 312.0],
        memory_gb: 80.0,
        utilisation: GPU_UTILISATION,
    },
    DeviceSpec {
        name: "l4",
        about: "NVIDIA L4 24 GB",
        tflops: [30.3, 60.0, 121.0],
        memory_gb: 24.0,
        utilisation: GPU_UTILISATION,
    },
    DeviceSpec {
        name: "cpu",
        about: "an assumed 16-core AVX-512 server at 2 GHz, 128 GB",
        tflops: [2.05, 2.05, 2.05],
        memory_gb: 128.0,
        // An assumption, not measured: CPU kernels sit further from their peak than GPUs'.
        utilisation: 0.3,
    },
];

impl DeviceSpec {
    /// The named device, or an error listing the names.
    pub fn named(name: &str) -> Result<&'static Self, ExperimentError> {
        DEVICES.iter().find(|d| d.name == name).ok_or_else(|| {
            let names: Vec<&str> = DEVICES.iter().map(|d| d.name).collect();
            ExperimentError::invalid(format!(
                "--device {name}: expected one of {}",
                names.join(", ")
            ))
        })
    }

    /// Peak FLOPs per second in `precision`.
    pub fn peak(&self, precision: Precision) -> f64 {
        let i = match precision {
            Precision::F32 => 0,
            Precision::Tf32 => 1,
            Precision::Bf16 => 2,
        };
        self.tflops[i] * 1e12
    }

    /// Seconds `flops` take at the assumed utilisation of the peak.
    pub fn seconds(&self, flops: f64, precision: Precision) -> f64 {
        flops / (self.peak(precision) * self.utilisation)
    }

    /// Whether `bytes` exceed the device's memory.
    pub fn over_memory(&self, bytes: u64) -> bool {
        bytes as f64 > self.memory_gb * 1e9
    }
}
