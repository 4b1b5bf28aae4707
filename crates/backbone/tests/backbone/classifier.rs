use backbone::{BlockShape, Classifier, Gates, Input, Mode, ViTConfig};
use burn::module::{Module, ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::tensor::{Int, Tensor};

use crate::{assert_close, randn, test_device, tiny_bert};

#[test]
fn classifier_forward_is_the_wrapped_models_forward() {
    let device = test_device();
    let vit = ViTConfig::vit_tiny_28().init(&device).unwrap();
    let images = randn([2, 1, 28, 28], &device);
    let direct = vit.forward(images.clone(), &Gates::none(), Mode::Deterministic);
    let wrapped =
        Classifier::from(vit).forward(Input::Images(images), &Gates::none(), Mode::Deterministic);
    assert_close(&wrapped, &direct, 1e-6);

    let bert = tiny_bert().init_classifier(3, &device).unwrap();
    let ids = Tensor::<2, Int>::from_ints([[5, 6, 7, 8], [9, 10, 0, 0]], &device);
    let mask = Tensor::<2, Int>::from_ints([[1, 1, 1, 1], [1, 1, 0, 0]], &device);
    let direct = bert.forward(
        ids.clone(),
        mask.clone(),
        &Gates::none(),
        Mode::Deterministic,
    );
    let wrapped = Classifier::from(bert).forward(
        Input::Tokens { ids, mask },
        &Gates::none(),
        Mode::Deterministic,
    );
    assert_close(&wrapped, &direct, 1e-6);
}

#[test]
fn flops_match_the_config_formulas() {
    let device = test_device();
    let config = ViTConfig::vit_tiny_28();
    let vit = Classifier::from(config.init(&device).unwrap());
    assert_eq!(vit.flops(999), config.flops_per_sample());
    let bert = tiny_bert();
    let model = Classifier::from(bert.init_classifier(2, &device).unwrap());
    let full = vec![BlockShape::full(2); 2];
    assert_eq!(model.flops(12), bert.flops(12, 2, &full));
}

#[test]
fn freezing_keeps_only_the_head_trainable() {
    let device = test_device().autodiff();
    let model = Classifier::from(tiny_bert().init_classifier(2, &device).unwrap());
    let head_params = model.head().num_params();
    let frozen = model.freeze_all_but_head();
    let ids = Tensor::<2, Int>::from_ints([[5, 6, 7]], &device);
    let mask = Tensor::<2, Int>::ones([1, 3], &device);
    let loss = frozen
        .forward(
            Input::Tokens { ids, mask },
            &Gates::none(),
            Mode::Deterministic,
        )
        .sum();
    let grads = burn::optim::GradientsParams::from_grads(loss.backward(), &frozen);
    assert_eq!(
        grads.len(),
        2,
        "only the head's weight and bias get gradients"
    );
    assert!(head_params > 0);
}

/// Parameter elements of a module with and without a gradient in `grads`.
struct GradCount<'a> {
    grads: &'a GradientsParams,
    with: usize,
    without: usize,
}

impl ModuleVisitor for GradCount<'_> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let n = param.shape().num_elements();
        match self.grads.get::<D>(param.id) {
            Some(_) => self.with += n,
            None => self.without += n,
        }
    }
}

/// `[with, without]` gradient counts of `module`'s parameter elements.
fn grad_split<M: Module>(module: &M, grads: &GradientsParams) -> [usize; 2] {
    let mut count = GradCount {
        grads,
        with: 0,
        without: 0,
    };
    module.visit(&mut count);
    [count.with, count.without]
}

/// Freezes `model`'s embeddings, backpropagates a loss on `input`, and checks that exactly the
/// embedding's parameters (`embedding` splits their elements as [`grad_split`] does) got no
/// gradient.
fn assert_only_embeddings_frozen(
    model: Classifier,
    input: Input,
    embedding: fn(&Classifier, &GradientsParams) -> [usize; 2],
) {
    let total = model.num_params();
    let frozen = model.freeze_embeddings();
    let loss = frozen
        .forward(input, &Gates::none(), Mode::Deterministic)
        .sum();
    let grads = GradientsParams::from_grads(loss.backward(), &frozen);
    let [trained, embedding_params] = embedding(&frozen, &grads);
    assert_eq!(trained, 0, "an embedding parameter got a gradient");
    assert!(embedding_params > 0);
    let blocks = frozen.encoder().num_params();
    assert_eq!(grad_split(frozen.encoder(), &grads), [blocks, 0]);
    let head = frozen.head().num_params();
    assert_eq!(grad_split(frozen.head(), &grads), [head, 0]);
    // Everything but the embedding has a gradient (the final norm and the rest included).
    assert_eq!(
        grad_split(&frozen, &grads),
        [total - embedding_params, embedding_params]
    );
}

#[test]
fn freezing_embeddings_keeps_blocks_and_head_trainable() {
    let device = test_device().autodiff();
    let bert = Classifier::from(tiny_bert().init_classifier(2, &device).unwrap());
    let ids = Tensor::<2, Int>::from_ints([[5, 6, 7], [8, 9, 0]], &device);
    let mask = Tensor::<2, Int>::from_ints([[1, 1, 1], [1, 1, 0]], &device);
    assert_only_embeddings_frozen(bert, Input::Tokens { ids, mask }, |c, grads| match c {
        Classifier::Bert(b) => grad_split(&b.bert.embeddings, grads),
        _ => unreachable!("a BERT classifier"),
    });

    let vit = ViTConfig::new()
        .with_image_size(8)
        .with_patch_size(4)
        .with_d_model(8)
        .with_n_layers(2)
        .with_n_heads(2)
        .with_d_mlp(16)
        .with_num_classes(3)
        .init(&device)
        .unwrap();
    let images = Input::Images(randn([2, 1, 8, 8], &device));
    assert_only_embeddings_frozen(Classifier::from(vit), images, |c, grads| match c {
        Classifier::Vit(v) => {
            let parts = [
                grad_split(&v.patch_embed, grads),
                grad_split(&v.cls_token, grads),
                grad_split(&v.pos_embed, grads),
            ];
            [0, 1].map(|i| parts.iter().map(|p| p[i]).sum())
        }
        _ => unreachable!("a Vision Transformer"),
    });
}

#[test]
#[should_panic(expected = "takes token sequences, not images")]
fn images_into_bert_is_refused() {
    let device = test_device();
    let model = Classifier::from(tiny_bert().init_classifier(2, &device).unwrap());
    model.forward(
        Input::Images(randn([1, 1, 4, 4], &device)),
        &Gates::none(),
        Mode::Deterministic,
    );
}
