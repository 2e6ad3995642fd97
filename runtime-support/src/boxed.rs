//! A submodule on the heap, for the parts of a large generated model: a debug build moves
//! modules through the stack by value (in `new`, in loading, in every `Module` method), and a
//! model of some thousand layers held in place overflows the 8 MB main thread. Burn implements
//! `Module` for `Option`, `Vec` and arrays, not for `Box`.

use alloc::boxed::Box;
use alloc::string::String;
use burn::module::{
    Content, Devices, DisplaySettings, Module, ModuleDisplay, ModuleDisplayDefault, ModuleMapper, ModuleVisitor,
};
use burn::tensor::Device;

/// A module held on the heap, transparent to Burn: it adds no segment to the parameter paths
/// (`down_blocks_0.conv2d1.weight`) and displays as the module itself.
#[derive(Clone, Debug)]
pub struct Boxed<M>(Box<M>);

impl<M> Boxed<M> {
    /// Builds the module with `build` and moves it to the heap: the module passes only through
    /// this function's frame, the caller's holds a pointer.
    pub fn new(device: &Device, build: impl FnOnce(&Device) -> M) -> Self {
        Self(Box::new(build(device)))
    }

    /// The module through `f`, back in the same allocation.
    fn map_in_place(mut self, f: impl FnOnce(M) -> M) -> Self {
        *self.0 = f(*self.0);
        self
    }
}

impl<M> core::ops::Deref for Boxed<M> {
    type Target = M;

    fn deref(&self) -> &M {
        &self.0
    }
}

impl<M: Module> Module for Boxed<M> {
    fn collect_devices(&self, devices: Devices) -> Devices {
        self.0.collect_devices(devices)
    }

    fn fork(self, device: &Device) -> Self {
        self.map_in_place(|m| m.fork(device))
    }

    fn to_device(self, device: &Device) -> Self {
        self.map_in_place(|m| m.to_device(device))
    }

    fn train(self) -> Self {
        self.map_in_place(Module::train)
    }

    fn valid(&self) -> Self {
        Self(Box::new(self.0.valid()))
    }

    fn materialize(self) -> Self {
        self.map_in_place(Module::materialize)
    }

    fn num_params(&self) -> usize {
        Module::num_params(&*self.0)
    }

    fn visit<V: ModuleVisitor>(&self, visitor: &mut V) {
        self.0.visit(visitor)
    }

    fn map<Mapper: ModuleMapper>(self, mapper: &mut Mapper) -> Self {
        self.map_in_place(|m| m.map(mapper))
    }
}

impl<M: ModuleDisplay> ModuleDisplayDefault for Boxed<M> {
    fn content(&self, content: Content) -> Option<Content> {
        self.0.content(content)
    }

    fn num_params(&self) -> usize {
        ModuleDisplayDefault::num_params(&*self.0)
    }
}

impl<M: ModuleDisplay> ModuleDisplay for Boxed<M> {
    fn format(&self, settings: DisplaySettings) -> String {
        self.0.format(settings)
    }

    fn custom_settings(&self) -> Option<DisplaySettings> {
        self.0.custom_settings()
    }

    fn custom_content(&self, content: Content) -> Option<Content> {
        self.0.custom_content(content)
    }
}
