//! The hand-written mapping of checkpoint tensors onto a model's parameters, shared by the
//! BERT and ViT-family imports: a [`Source`] gives tensors by the names the checkpoint gave
//! them, a [`Loader`] moves them into parameters and collects every missing, unexpected or
//! mis-shaped name into one [`ImportError::Tensors`] (why by hand: see the crate root).

use std::collections::BTreeSet;
use std::path::Path;

use burn::module::Param;
use burn::nn::conv::Conv2d;
use burn::nn::{LayerNorm, Linear};
use burn::tensor::{Tensor, TensorData};

use crate::error::ImportError;
use crate::safetensors::SafeTensors;

/// Where the mapping reads a checkpoint's tensors, by the names the checkpoint gave them.
pub(crate) trait Source {
    /// The file, for messages.
    fn path(&self) -> &Path;
    /// Every tensor's name.
    fn names(&self) -> Vec<&str>;
    /// One tensor's stored shape.
    fn shape(&self, name: &str) -> Option<&[usize]>;
    /// A tensor's values as f32, or its dtype when it is not a float tensor.
    fn values(&self, name: &str) -> Result<Vec<f32>, String>;
    /// Whether linear weights are stored `[out, in]` (PyTorch's `nn.Linear`), not `[in, out]`
    /// (ONNX's `MatMul(x, W)`, Burn's layout).
    fn out_in(&self) -> bool;
}

impl Source for SafeTensors {
    fn path(&self) -> &Path {
        self.path()
    }

    fn names(&self) -> Vec<&str> {
        self.tensors().map(|(name, _)| name).collect()
    }

    fn shape(&self, name: &str) -> Option<&[usize]> {
        self.info(name).map(|info| info.shape.as_slice())
    }

    fn values(&self, name: &str) -> Result<Vec<f32>, String> {
        self.to_f32(name).map_err(|_| {
            self.info(name)
                .map_or_else(String::new, |i| i.dtype.clone())
        })
    }

    fn out_in(&self) -> bool {
        true
    }
}

/// Moves checkpoint tensors into a model's parameters, collecting every missing or
/// mismatched name instead of stopping at the first.
pub(crate) struct Loader<'a> {
    file: &'a dyn Source,
    /// Put before every name asked for (e.g. `bert.`, `vit.`); may change between parts.
    pub(crate) prefix: &'a str,
    used: BTreeSet<String>,
    missing: Vec<String>,
    mismatched: Vec<String>,
}

impl<'a> Loader<'a> {
    pub(crate) fn new(file: &'a dyn Source, prefix: &'a str) -> Self {
        Self {
            file,
            prefix,
            used: BTreeSet::new(),
            missing: Vec::new(),
            mismatched: Vec::new(),
        }
    }

    /// `{name}.weight` and, when the model has one, `{name}.bias`.
    pub(crate) fn linear(&mut self, name: &str, linear: &mut Linear) {
        self.linear_with(name, linear, true);
    }

    /// As [`Loader::linear`]; with `bias` false the checkpoint has none (e.g. ViT's
    /// `qkv_bias = false`) and the model's bias is set to zero, which computes the same.
    pub(crate) fn linear_with(&mut self, name: &str, linear: &mut Linear, bias: bool) {
        let out_in = self.file.out_in();
        self.param(&format!("{name}.weight"), &mut linear.weight, out_in);
        if let Some(param) = &mut linear.bias {
            match bias {
                true => self.param(&format!("{name}.bias"), param, false),
                false => set(param, vec![0.0; param.lazy_shape().num_elements()]),
            }
        }
    }

    pub(crate) fn layer_norm(&mut self, name: &str, norm: &mut LayerNorm) {
        self.param(&format!("{name}.weight"), &mut norm.gamma, false);
        if let Some(beta) = &mut norm.beta {
            self.param(&format!("{name}.bias"), beta, false);
        }
    }

    /// A convolution, stored `[out, in, kh, kw]` in PyTorch and Burn alike.
    pub(crate) fn conv(&mut self, name: &str, conv: &mut Conv2d) {
        self.param(&format!("{name}.weight"), &mut conv.weight, false);
        if let Some(bias) = &mut conv.bias {
            self.param(&format!("{name}.bias"), bias, false);
        }
    }

    /// Loads `prefix + name` into `param`; `transpose` for a 2-D PyTorch `[out, in]` weight
    /// going into Burn's `[in, out]`.
    pub(crate) fn param<const D: usize>(
        &mut self,
        name: &str,
        param: &mut Param<Tensor<D>>,
        transpose: bool,
    ) {
        let shape = param.lazy_shape().to_vec();
        let mut stored = shape.clone();
        if transpose {
            stored.reverse();
        }
        let Some(mut values) = self.take(name, &stored) else {
            return;
        };
        if transpose {
            values = transposed(&values, stored[0], stored[1]);
        }
        set(param, values);
    }

    /// The values of `prefix + name`, when it is there with shape `stored` and a float dtype;
    /// else `None`, the problem recorded.
    pub(crate) fn take(&mut self, name: &str, stored: &[usize]) -> Option<Vec<f32>> {
        let key = format!("{}{name}", self.prefix);
        let Some(found) = self.file.shape(&key) else {
            self.missing.push(key);
            return None;
        };
        self.used.insert(key.clone());
        if found != stored {
            self.mismatched
                .push(format!("{key}: expected shape {stored:?}, found {found:?}"));
            return None;
        }
        match self.file.values(&key) {
            Ok(values) => Some(values),
            Err(dtype) => {
                let found = format!("{key}: dtype {dtype}, expected a float type");
                self.mismatched.push(found);
                None
            }
        }
    }

    /// One error listing every problem, or `Ok` when every tensor found its place; the names
    /// `prefix + ignored[i]` may be left unused.
    pub(crate) fn finish(self, ignored: &[&str]) -> Result<(), ImportError> {
        let ignored: Vec<String> = (ignored.iter())
            .map(|n| format!("{}{n}", self.prefix))
            .collect();
        let unexpected: Vec<String> = (self.file.names().into_iter())
            .filter(|name| !self.used.contains(*name) && !ignored.iter().any(|i| i == name))
            .map(String::from)
            .collect();
        if self.missing.is_empty() && unexpected.is_empty() && self.mismatched.is_empty() {
            return Ok(());
        }
        Err(ImportError::Tensors {
            path: self.file.path().to_path_buf(),
            missing: self.missing,
            unexpected,
            mismatched: self.mismatched,
        })
    }
}

/// `values` (row-major, of the parameter's shape) as the parameter.
pub(crate) fn set<const D: usize>(param: &mut Param<Tensor<D>>, values: Vec<f32>) {
    let shape = param.lazy_shape().to_vec();
    let tensor = Tensor::from_data(TensorData::new(values, shape), &param.lazy_device());
    *param = param.clone().transform_for_load(tensor, param.id);
}

/// Row-major `[rows, cols]` -> `[cols, rows]`.
pub(crate) fn transposed(values: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    (0..cols)
        .flat_map(|c| (0..rows).map(move |r| values[r * cols + c]))
        .collect()
}
