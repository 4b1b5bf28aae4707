//! The operations under autodiff: GELU, softmax, LayerNorm, products and Linears with their own
//! backward passes, which go back through the inner backend's [`KernelBackend`] kernels. On flex
//! the products are gemm reading transposed views in place and writing without a zeroed buffer
//! (Burn's backward passes run flex's product, which zeroes and copies its output first), and
//! softmax and LayerNorm step back in one pass over the rows each.

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind, binary, unary};
use burn::backend::ops::FloatTensorOps;
use burn::backend::{Autodiff, AutodiffBackend, Backend, TensorMetadata, tensor::FloatTensor};

use crate::extension::KernelBackend;

impl<B: KernelBackend, C: CheckpointStrategy> KernelBackend for Autodiff<B, C> {
    fn gelu_exact(x: FloatTensor<Self>) -> FloatTensor<Self> {
        one_input::<B, C>(x, B::gelu_exact, B::gelu_exact_backward, Keep::Input)
    }

    fn softmax_last(x: FloatTensor<Self>) -> FloatTensor<Self> {
        one_input::<B, C>(x, B::softmax_last, B::softmax_last_backward, Keep::Output)
    }

    fn layer_norm_affine(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        epsilon: f64,
    ) -> FloatTensor<Self> {
        #[derive(Debug)]
        struct LayerNormAffine;

        impl<B: KernelBackend> Backward<B, 3> for LayerNormAffine {
            // The input and the scale (shared handles), and epsilon.
            type State = (B::FloatTensorPrimitive, B::FloatTensorPrimitive, f64);

            fn backward(
                self,
                ops: Ops<Self::State, 3>,
                grads: &mut Gradients,
                _: &mut Checkpointer,
            ) {
                let [x_node, gamma_node, beta_node] = ops.parents;
                let grad = grads.consume::<B>(&ops.node);
                let (x, gamma, epsilon) = ops.state;
                let (dx, dgamma, dbeta) = B::layer_norm_backward(x, gamma, grad, epsilon);
                for (node, grad) in [(x_node, dx), (gamma_node, dgamma), (beta_node, dbeta)] {
                    if let Some(node) = node {
                        grads.register::<B>(node.id, grad);
                    }
                }
            }
        }

        match LayerNormAffine
            .prepare::<C>([x.node(), gamma.node(), beta.node()])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(prep) => {
                let (x, gamma) = (x.into_primitive(), gamma.into_primitive());
                let state = (x.clone(), gamma.clone(), epsilon);
                let y = B::layer_norm_affine(x, gamma, beta.into_primitive(), epsilon);
                prep.finish(state, y)
            }
            OpsKind::UnTracked(prep) => prep.finish(B::layer_norm_affine(
                x.into_primitive(),
                gamma.into_primitive(),
                beta.into_primitive(),
                epsilon,
            )),
        }
    }

    fn matmul(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        #[derive(Debug)]
        struct Matmul;

        impl<B: KernelBackend> Backward<B, 2> for Matmul {
            // Each operand, kept when the other one needs a gradient.
            type State = (
                Option<B::FloatTensorPrimitive>,
                Option<B::FloatTensorPrimitive>,
            );

            fn backward(
                self,
                ops: Ops<Self::State, 2>,
                grads: &mut Gradients,
                _: &mut Checkpointer,
            ) {
                let (lhs, rhs) = ops.state;
                let kept = "kept for the other operand's gradient";
                binary::<B, _, _>(
                    ops.parents,
                    ops.node,
                    grads,
                    |grad| B::matmul(grad, B::float_transpose(rhs.expect(kept))),
                    |grad| B::matmul(B::float_transpose(lhs.expect(kept)), grad),
                );
            }
        }

        // Broadcast batch dimensions need their gradients summed: Burn's op does that.
        let (l, r) = (
            lhs.primitive().shape().to_vec(),
            rhs.primitive().shape().to_vec(),
        );
        if l.len() != r.len() || l.len() < 2 || l[..l.len() - 2] != r[..r.len() - 2] {
            return Self::float_matmul(lhs, rhs);
        }
        let (lhs_tracked, rhs_tracked) = (lhs.is_tracked(), rhs.is_tracked());
        match Matmul
            .prepare::<C>([lhs.node(), rhs.node()])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(prep) => {
                let (lhs, rhs) = (lhs.into_primitive(), rhs.into_primitive());
                let state = (
                    rhs_tracked.then(|| lhs.clone()),
                    lhs_tracked.then(|| rhs.clone()),
                );
                prep.finish(state, B::matmul(lhs, rhs))
            }
            OpsKind::UnTracked(prep) => {
                prep.finish(B::matmul(lhs.into_primitive(), rhs.into_primitive()))
            }
        }
    }

    fn linear_with_bias(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        #[derive(Debug)]
        struct LinearWithBias;

        impl<B: KernelBackend> Backward<B, 3> for LinearWithBias {
            // The input, kept when the weight needs a gradient; the weight, when the input does.
            type State = (
                Option<B::FloatTensorPrimitive>,
                Option<B::FloatTensorPrimitive>,
            );

            fn backward(
                self,
                ops: Ops<Self::State, 3>,
                grads: &mut Gradients,
                _: &mut Checkpointer,
            ) {
                let [x_node, weight_node, bias_node] = ops.parents;
                let grad = grads.consume::<B>(&ops.node);
                let (x, weight) = ops.state;
                let kept = "kept for the other operand's gradient";
                if let Some(node) = x_node {
                    let dx = B::linear_x_grad(weight.expect(kept), grad.clone());
                    grads.register::<B>(node.id, dx);
                }
                if let Some(node) = weight_node {
                    let dw = B::linear_weight_grad(x.expect(kept), grad.clone());
                    grads.register::<B>(node.id, dw);
                }
                if let Some(node) = bias_node {
                    grads.register::<B>(node.id, B::linear_bias_backward(grad));
                }
            }
        }

        let (x_tracked, weight_tracked) = (x.is_tracked(), weight.is_tracked());
        match LinearWithBias
            .prepare::<C>([x.node(), weight.node(), bias.node()])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(prep) => {
                let (x, weight) = (x.into_primitive(), weight.into_primitive());
                let state = (
                    weight_tracked.then(|| x.clone()),
                    x_tracked.then(|| weight.clone()),
                );
                prep.finish(state, B::linear_with_bias(x, weight, bias.into_primitive()))
            }
            OpsKind::UnTracked(prep) => prep.finish(B::linear_with_bias(
                x.into_primitive(),
                weight.into_primitive(),
                bias.into_primitive(),
            )),
        }
    }

    fn dropout_mask(x: FloatTensor<Self>, keep: f64) -> FloatTensor<Self> {
        // A constant on the graph: the product with it carries the gradient.
        Self::from_inner(B::dropout_mask(x.into_primitive(), keep))
    }
}

/// Which tensor a one-input op's backward pass reads: GELU's its input, softmax's its output.
enum Keep {
    Input,
    Output,
}

/// A one-input op whose backward pass is `backward(kept, grad)`, the kept tensor a shared
/// handle, not a copy.
struct OneInput<B: Backend> {
    backward: fn(B::FloatTensorPrimitive, B::FloatTensorPrimitive) -> B::FloatTensorPrimitive,
}

impl<B: Backend> std::fmt::Debug for OneInput<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OneInput")
    }
}

impl<B: KernelBackend> Backward<B, 1> for OneInput<B> {
    type State = B::FloatTensorPrimitive;

    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let kept = ops.state;
        unary::<B, _>(ops.parents, ops.node, grads, |grad| {
            (self.backward)(kept, grad)
        });
    }
}

/// `forward(x)` on the graph, stepping back through `backward` (see [`OneInput`]).
fn one_input<B: KernelBackend, C: CheckpointStrategy>(
    x: FloatTensor<Autodiff<B, C>>,
    forward: fn(B::FloatTensorPrimitive) -> B::FloatTensorPrimitive,
    backward: fn(B::FloatTensorPrimitive, B::FloatTensorPrimitive) -> B::FloatTensorPrimitive,
    keep: Keep,
) -> FloatTensor<Autodiff<B, C>> {
    let op = OneInput::<B> { backward };
    match op.prepare::<C>([x.node()]).compute_bound().stateful() {
        OpsKind::Tracked(prep) => match keep {
            Keep::Input => {
                let input = x.into_primitive();
                prep.finish(input.clone(), forward(input))
            }
            Keep::Output => {
                let output = forward(x.into_primitive());
                prep.finish(output.clone(), output)
            }
        },
        OpsKind::UnTracked(prep) => prep.finish(forward(x.into_primitive())),
    }
}
