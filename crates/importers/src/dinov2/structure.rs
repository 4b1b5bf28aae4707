//! What the DINOv2 import reads from the graph's structure rather than from names, beside
//! what every ONNX import reads ([`crate::onnx_structure`]): the split position table, and
//! checks that the graph computes what the [`VisionTransformer`](backbone::VisionTransformer)
//! computes.

use super::bicubic;
use crate::error::ImportError;
use crate::onnx::{Node, OnnxGraph, OnnxTensor};

/// The anonymous class position `[1, 1, D]` and patch positions `[1, g², D]`, and g.
pub(super) fn position_tables(
    graph: &OnnxGraph,
    d: usize,
) -> Result<(&OnnxTensor, &OnnxTensor, usize), ImportError> {
    let tables: Vec<&OnnxTensor> = graph
        .initializers
        .iter()
        .filter(|t| !t.name.contains('.') && matches!(t.dims.as_slice(), &[1, _, w] if w == d))
        .collect();
    let (class, patches): (Vec<&OnnxTensor>, Vec<&OnnxTensor>) =
        tables.iter().partition(|t| t.dims[1] == 1);
    let grid = patches.first().map_or(0, |t| t.dims[1].isqrt());
    match (class.as_slice(), patches.as_slice()) {
        ([class], [patches]) if grid * grid == patches.dims[1] => Ok((class, patches, grid)),
        _ => Err(ImportError::file(
            &graph.path,
            format!(
                "expected one anonymous class position [1, 1, {d}] and one patch position \
                 table [1, g², {d}] (the exporter's split of DINOv2's position embeddings), \
                 found {:?}",
                tables
                    .iter()
                    .map(|t| (&t.name, &t.dims))
                    .collect::<Vec<_>>()
            ),
        )),
    }
}

/// The patch embedding must be a Conv with stride = kernel, no padding, one group.
pub(super) fn check_patch_conv(
    graph: &OnnxGraph,
    weight: &str,
    patch: usize,
) -> Result<(), ImportError> {
    let conv = graph
        .consumers(weight)
        .find(|n| n.op_type == "Conv" && n.inputs.get(1).is_some_and(|i| i == weight));
    let ints = |node: &Node, name: &str| node.attribute(name).map(|a| a.ints.clone());
    let ok = conv.is_some_and(|c| {
        let p = patch as i64;
        ints(c, "strides") == Some(vec![p, p])
            && ints(c, "pads").is_none_or(|pads| pads.iter().all(|&x| x == 0))
            && ints(c, "dilations").is_none_or(|d| d.iter().all(|&x| x == 1))
            && c.attribute("group")
                .and_then(|a| a.i)
                .is_none_or(|g| g == 1)
    });
    if ok {
        return Ok(());
    }
    Err(ImportError::file(
        &graph.path,
        format!(
            "the patch embedding {weight} should feed a Conv with strides [{patch}, {patch}], \
             no padding, no dilation, one group; found {:?}",
            conv.map(|c| &c.attributes)
        ),
    ))
}

/// The patch positions must reach a `Resize` whose mode is the bicubic one of
/// [`bicubic::resize`].
pub(super) fn check_resize(graph: &OnnxGraph, table: &str) -> Result<(), ImportError> {
    let mut value = table.to_string();
    // The exporter reshapes, transposes and casts the table before resizing it.
    for _ in 0..8 {
        let Some(node) = graph.consumers(&value).next() else {
            break;
        };
        if node.op_type == "Resize" {
            let text = |name: &str, default: &str| {
                node.attribute(name)
                    .and_then(|a| a.s.clone())
                    .unwrap_or_else(|| default.to_string())
            };
            let int = |name: &str| node.attribute(name).and_then(|a| a.i).unwrap_or(0);
            let a = node
                .attribute("cubic_coeff_a")
                .and_then(|a| a.f)
                .unwrap_or(-0.75);
            let found = (
                text("mode", "nearest"),
                text("coordinate_transformation_mode", "half_pixel"),
                f64::from(a),
                int("exclude_outside"),
                int("antialias"),
            );
            let wanted = ("cubic", "half_pixel", bicubic::CUBIC_A, 0, 0);
            if (
                found.0.as_str(),
                found.1.as_str(),
                found.2,
                found.3,
                found.4,
            ) == wanted
            {
                return Ok(());
            }
            return Err(ImportError::file(
                &graph.path,
                format!(
                    "Resize {:?} of the position table has (mode, coordinate transformation, \
                     cubic a, exclude_outside, antialias) = {found:?}; only {wanted:?} is \
                     implemented",
                    node.name
                ),
            ));
        }
        let Some(next) = node.outputs.first() else {
            break;
        };
        value = next.clone();
    }
    Err(ImportError::file(
        &graph.path,
        format!("the patch position table {table} does not reach a Resize node"),
    ))
}
