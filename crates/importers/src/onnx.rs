//! Reading ONNX models: an own reader of the protobuf file ([`OnnxGraph`]: initialisers, nodes,
//! graph inputs and outputs), what the DINOv2 import reads. Every failure is an [`ImportError`]
//! naming the file; a malformed file also gets the byte offset and the message type being read.
//!
//! Only what an import needs is decoded: float initialisers (FLOAT, DOUBLE; `raw_data` or the
//! typed fields) become f32 values, other tensors keep their name, type and shape; node
//! attributes keep their float, integer, string, tensor and integer-list values. External
//! data is rejected.

mod wire;

use std::path::{Path, PathBuf};

use crate::error::ImportError;
use wire::{Field, Fields, WireError};

/// ONNX `TensorProto.DataType` of 32-bit floats.
pub const ONNX_FLOAT: i32 = 1;
/// ONNX `TensorProto.DataType` of 64-bit floats.
pub const ONNX_DOUBLE: i32 = 11;

/// The main graph of an ONNX model.
#[derive(Debug, Clone)]
pub struct OnnxGraph {
    /// The file it was read from (named in errors).
    pub path: PathBuf,
    /// Graph inputs (data fed at run time), in order.
    pub inputs: Vec<ValueInfo>,
    /// Graph outputs, in order.
    pub outputs: Vec<ValueInfo>,
    /// Nodes in the file's (topological) order.
    pub nodes: Vec<Node>,
    /// Initialisers (the weights), in file order.
    pub initializers: Vec<OnnxTensor>,
}

/// A tensor stored in the file: an initialiser or a node attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct OnnxTensor {
    /// Its name; exporters give anonymous weights names like `onnx::MatMul_1234`.
    pub name: String,
    /// The shape, outermost first (`[]` for a scalar).
    pub dims: Vec<usize>,
    /// The ONNX data type code ([`ONNX_FLOAT`], [`ONNX_DOUBLE`], 7 = INT64, ...).
    pub data_type: i32,
    /// Row-major values for FLOAT and DOUBLE tensors (checked against `dims`); `None` for
    /// other types.
    pub floats: Option<Vec<f32>>,
}

/// One operator application.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The node name (may be empty).
    pub name: String,
    /// The operator, e.g. `MatMul`.
    pub op_type: String,
    /// Input value names; an empty name is an omitted optional input.
    pub inputs: Vec<String>,
    /// Output value names.
    pub outputs: Vec<String>,
    /// Attributes.
    pub attributes: Vec<Attribute>,
}

/// A node attribute; only the field matching its type is set.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Attribute {
    /// The attribute name, e.g. `strides`.
    pub name: String,
    /// A FLOAT attribute.
    pub f: Option<f32>,
    /// An INT attribute.
    pub i: Option<i64>,
    /// A STRING attribute (UTF-8, lossy).
    pub s: Option<String>,
    /// A TENSOR attribute (`Constant`'s `value`).
    pub t: Option<OnnxTensor>,
    /// An INTS attribute.
    pub ints: Vec<i64>,
}

/// A graph input or output.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueInfo {
    /// The value name.
    pub name: String,
    /// Element type code (as [`OnnxTensor::data_type`]).
    pub elem_type: i32,
    /// The shape.
    pub dims: Vec<Dim>,
}

/// One dimension of a [`ValueInfo`].
#[derive(Debug, Clone, PartialEq)]
pub enum Dim {
    /// A fixed size.
    Value(i64),
    /// A symbolic size such as `batch_size`.
    Param(String),
    /// Neither given.
    Unknown,
}

impl OnnxGraph {
    /// Reads the graph of an ONNX model file.
    pub fn read(path: &Path) -> Result<Self, ImportError> {
        let bytes = std::fs::read(path)
            .map_err(|e| ImportError::caused(path, "cannot read the file", e))?;
        Self::parse(path, &bytes).map_err(|e| {
            ImportError::file(
                path,
                format!(
                    "malformed ONNX file: {} (in {} at byte {})",
                    e.what, e.message, e.offset
                ),
            )
        })
    }

    fn parse(path: &Path, bytes: &[u8]) -> Result<Self, WireError> {
        let mut graph = None;
        for field in Fields::new(bytes, 0, "ModelProto") {
            let field = field?;
            if field.number == 7 {
                graph = Some(field);
            }
        }
        let Some(graph) = graph else {
            return Err(WireError {
                offset: 0,
                message: "ModelProto",
                what: format!(
                    "no graph (field 7) in {} bytes; expected an ONNX model",
                    bytes.len()
                ),
            });
        };
        let mut out = Self {
            path: path.to_path_buf(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            nodes: Vec::new(),
            initializers: Vec::new(),
        };
        for field in graph.message("GraphProto")? {
            let field = field?;
            match field.number {
                1 => out.nodes.push(node(&field)?),
                5 => out.initializers.push(tensor(&field)?),
                11 => out.inputs.push(value_info(&field)?),
                12 => out.outputs.push(value_info(&field)?),
                _ => {}
            }
        }
        Ok(out)
    }

    /// The initialiser called `name`.
    pub fn initializer(&self, name: &str) -> Option<&OnnxTensor> {
        self.initializers.iter().find(|t| t.name == name)
    }

    /// The nodes that read the value `name`.
    pub fn consumers<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Node> + 'a {
        self.nodes
            .iter()
            .filter(move |n| n.inputs.iter().any(|i| i == name))
    }

    /// The node that writes the value `name`.
    pub fn producer(&self, name: &str) -> Option<&Node> {
        self.nodes
            .iter()
            .find(|n| n.outputs.iter().any(|o| o == name))
    }
}

impl Node {
    /// The attribute called `name`.
    pub fn attribute(&self, name: &str) -> Option<&Attribute> {
        self.attributes.iter().find(|a| a.name == name)
    }
}

fn node(field: &Field<'_>) -> Result<Node, WireError> {
    let mut node = Node {
        name: String::new(),
        op_type: String::new(),
        inputs: Vec::new(),
        outputs: Vec::new(),
        attributes: Vec::new(),
    };
    for f in field.message("NodeProto")? {
        let f = f?;
        match f.number {
            1 => node.inputs.push(f.string()?),
            2 => node.outputs.push(f.string()?),
            3 => node.name = f.string()?,
            4 => node.op_type = f.string()?,
            5 => node.attributes.push(attribute(&f)?),
            _ => {}
        }
    }
    Ok(node)
}

fn attribute(field: &Field<'_>) -> Result<Attribute, WireError> {
    let mut attribute = Attribute::default();
    let mut ints = Vec::new();
    for f in field.message("AttributeProto")? {
        let f = f?;
        match f.number {
            1 => attribute.name = f.string()?,
            2 => attribute.f = Some(f.f32()?),
            // int64 travels as its two's complement varint.
            3 => attribute.i = Some(f.varint()? as i64),
            4 => attribute.s = Some(f.string()?),
            5 => attribute.t = Some(tensor(&f)?),
            8 => f.push_varints(&mut ints)?,
            _ => {}
        }
    }
    attribute.ints = ints.into_iter().map(|v| v as i64).collect();
    Ok(attribute)
}

fn tensor(field: &Field<'_>) -> Result<OnnxTensor, WireError> {
    let (mut dims, mut data_type, mut name) = (Vec::new(), 0, String::new());
    let (mut raw, mut floats, mut doubles) = (None, Vec::<[u8; 4]>::new(), Vec::<[u8; 8]>::new());
    let mut external = false;
    for f in field.message("TensorProto")? {
        let f = f?;
        match f.number {
            1 => f.push_varints(&mut dims)?,
            2 => data_type = f.varint()? as i32,
            4 => f.push_fixed(&mut floats)?,
            8 => name = f.string()?,
            9 => raw = Some(f.bytes()?),
            10 => f.push_fixed(&mut doubles)?,
            14 => external = f.varint()? == 1,
            _ => {}
        }
    }
    let fail = |what: String| WireError {
        offset: field.offset,
        message: "TensorProto",
        what: format!("tensor {name:?}: {what}"),
    };
    if external {
        return Err(fail(
            "external data is not supported; expected the values inside the file".into(),
        ));
    }
    let dims: Vec<usize> = dims
        .into_iter()
        .map(|d| {
            usize::try_from(d as i64).map_err(|_| fail(format!("negative dimension {}", d as i64)))
        })
        .collect::<Result<_, _>>()?;
    let count = dims
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| fail(format!("shape {dims:?} overflows")))?;
    let floats = match data_type {
        ONNX_FLOAT => Some(match raw {
            Some(raw) => decode(raw, count, &fail, |b: [u8; 4]| f32::from_le_bytes(b))?,
            None => decode_items(&floats, count, &fail, |&b| f32::from_le_bytes(b))?,
        }),
        ONNX_DOUBLE => Some(match raw {
            Some(raw) => decode(raw, count, &fail, |b: [u8; 8]| f64::from_le_bytes(b) as f32)?,
            None => decode_items(&doubles, count, &fail, |&b| f64::from_le_bytes(b) as f32)?,
        }),
        _ => None,
    };
    Ok(OnnxTensor {
        name,
        dims,
        data_type,
        floats,
    })
}

/// `count` little-endian values of `N` bytes from `raw_data`.
fn decode<const N: usize>(
    raw: &[u8],
    count: usize,
    fail: &dyn Fn(String) -> WireError,
    convert: impl Fn([u8; N]) -> f32,
) -> Result<Vec<f32>, WireError> {
    if raw.len() != count * N {
        return Err(fail(format!(
            "raw_data has {} bytes, expected {} for {count} values",
            raw.len(),
            count * N
        )));
    }
    Ok(raw
        .chunks_exact(N)
        .map(|c| convert(std::array::from_fn(|i| c[i])))
        .collect())
}

/// `count` values from a typed repeated field.
fn decode_items<T>(
    items: &[T],
    count: usize,
    fail: &dyn Fn(String) -> WireError,
    convert: impl Fn(&T) -> f32,
) -> Result<Vec<f32>, WireError> {
    if items.len() != count {
        return Err(fail(format!(
            "{} stored values, expected {count} for its shape",
            items.len()
        )));
    }
    Ok(items.iter().map(convert).collect())
}

fn value_info(field: &Field<'_>) -> Result<ValueInfo, WireError> {
    let mut info = ValueInfo {
        name: String::new(),
        elem_type: 0,
        dims: Vec::new(),
    };
    for f in field.message("ValueInfoProto")? {
        let f = f?;
        match f.number {
            1 => info.name = f.string()?,
            2 => {
                for t in f.message("TypeProto")? {
                    let t = t?;
                    if t.number == 1 {
                        tensor_type(&t, &mut info)?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(info)
}

/// `TypeProto.Tensor`: element type and shape.
fn tensor_type(field: &Field<'_>, info: &mut ValueInfo) -> Result<(), WireError> {
    for f in field.message("TypeProto.Tensor")? {
        let f = f?;
        match f.number {
            1 => info.elem_type = f.varint()? as i32,
            2 => {
                for d in f.message("TensorShapeProto")? {
                    let d = d?;
                    if d.number == 1 {
                        info.dims.push(dimension(&d)?);
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn dimension(field: &Field<'_>) -> Result<Dim, WireError> {
    let mut dim = Dim::Unknown;
    for f in field.message("TensorShapeProto.Dimension")? {
        let f = f?;
        match f.number {
            1 => dim = Dim::Value(f.varint()? as i64),
            2 => dim = Dim::Param(f.string()?),
            _ => {}
        }
    }
    Ok(dim)
}
