//! String tensors (ONNX `STRING`) and the ops on them: Burn has no string tensors, so the
//! generated code holds them in [`StringTensor`], a shape and its row-major values on the host.

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use burn::tensor::{Bool, Device, Int, Tensor, TensorData};
pub use onnx_op_types::CaseChange;

/// A tensor of strings: `shape` and its elements in row-major order. A model's string inputs
/// and outputs are of this type (rank-0 ones are `String`s).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StringTensor<const D: usize> {
    shape: [usize; D],
    values: Vec<String>,
}

impl<const D: usize> StringTensor<D> {
    /// A tensor of `shape` from its elements in row-major order.
    ///
    /// # Panics
    /// If `values` does not hold exactly the shape's element count.
    pub fn new(values: Vec<String>, shape: [usize; D]) -> Self {
        let count: usize = shape.iter().product();
        assert_eq!(values.len(), count, "a string tensor of shape {shape:?} holds {count} values");
        Self { shape, values }
    }

    /// The shape.
    pub fn dims(&self) -> [usize; D] {
        self.shape
    }

    /// The elements, row-major.
    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// The elements, row-major, owned.
    pub fn into_values(self) -> Vec<String> {
        self.values
    }

    /// The same elements with another shape of the same count.
    pub fn reshape<const E: usize>(self, shape: [usize; E]) -> StringTensor<E> {
        StringTensor::new(self.values, shape)
    }
}

impl StringTensor<1> {
    /// A rank-0 value as the one-element vector generated code holds it in.
    pub fn scalar(value: String) -> Self {
        Self::new(alloc::vec![value], [1])
    }

    /// The value of a one-element vector (a rank-0 output).
    pub fn into_scalar(self) -> String {
        self.values.into_iter().next().unwrap_or_default()
    }
}

/// `f(a, b)` of two tensors broadcast together (numpy's rules: shapes aligned at the right, a
/// size 1 repeated), of rank `D`.
fn broadcast<const A: usize, const B: usize, const D: usize, T>(
    a: &StringTensor<A>,
    b: &StringTensor<B>,
    f: impl Fn(&str, &str) -> T,
) -> ([usize; D], Vec<T>) {
    let mut shape = [1usize; D];
    let (pad_a, pad_b) = (D - A, D - B);
    for (axis, out) in shape.iter_mut().enumerate() {
        let da = if axis >= pad_a { a.shape[axis - pad_a] } else { 1 };
        let db = if axis >= pad_b { b.shape[axis - pad_b] } else { 1 };
        assert!(da == db || da == 1 || db == 1, "shapes {:?} and {:?} do not broadcast", a.shape, b.shape);
        *out = if da == 1 { db } else { da };
    }
    let count: usize = shape.iter().product();
    let mut values = Vec::with_capacity(count);
    let mut index = [0usize; D];
    for _ in 0..count {
        let flat = |dims: &[usize], pad: usize| {
            dims.iter().enumerate().fold(0, |acc, (axis, &d)| acc * d + if d == 1 { 0 } else { index[axis + pad] })
        };
        values.push(f(&a.values[flat(&a.shape, pad_a)], &b.values[flat(&b.shape, pad_b)]));
        for axis in (0..D).rev() {
            index[axis] += 1;
            if index[axis] < shape[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
    (shape, values)
}

/// Each element's row-major position in `x`, of its shape: an op that only moves elements
/// (Gather, Reshape, Slice, ...) moves these on the device, then [`string_take`] reads them.
pub fn string_positions<const D: usize>(x: &StringTensor<D>, device: &Device) -> Tensor<D, Int> {
    let count = x.values.len() as i64;
    Tensor::<1, Int>::arange(0..count, device).reshape(x.shape)
}

/// The elements of `x` at `positions` (from [`string_positions`] of `x`, moved), of their shape.
pub fn string_take<const D: usize, const E: usize>(x: StringTensor<D>, positions: Tensor<E, Int>) -> StringTensor<E> {
    let shape = positions.dims();
    let values = positions
        .into_data()
        .iter::<i64>()
        .map(|p| usize::try_from(p).ok().and_then(|p| x.values.get(p)).cloned().unwrap_or_default())
        .collect();
    StringTensor::new(values, shape)
}

/// ONNX `Equal` of two string tensors, broadcast.
pub fn string_equal<const A: usize, const B: usize, const D: usize>(
    a: StringTensor<A>,
    b: StringTensor<B>,
    device: &Device,
) -> Tensor<D, Bool> {
    let (shape, values) = broadcast::<A, B, D, _>(&a, &b, |x, y| x == y);
    Tensor::from_data(TensorData::new(values, shape), device)
}

/// ONNX `StringConcat`: `a + b` elementwise, broadcast.
pub fn string_concat<const A: usize, const B: usize, const D: usize>(
    a: StringTensor<A>,
    b: StringTensor<B>,
) -> StringTensor<D> {
    let (shape, values) = broadcast::<A, B, D, _>(&a, &b, |x, y| {
        let mut s = String::with_capacity(x.len() + y.len());
        s.push_str(x);
        s.push_str(y);
        s
    });
    StringTensor::new(values, shape)
}

/// The parts of `s` as Python's `str.split(delimiter, max_splits)` makes them (ONNX
/// `StringSplit`'s reference): with no delimiter, runs of whitespace separate parts and
/// whitespace at either end is dropped (the rest after the last split keeps its trailing
/// whitespace).
fn split_parts<'a>(s: &'a str, delimiter: Option<&str>, max_splits: Option<usize>) -> Vec<&'a str> {
    let limit = max_splits.unwrap_or(usize::MAX);
    if let Some(delimiter) = delimiter {
        return s.splitn(limit.saturating_add(1), delimiter).collect();
    }
    let mut parts = Vec::new();
    let mut rest = s.trim_start();
    while !rest.is_empty() {
        if parts.len() == limit {
            parts.push(rest);
            break;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        parts.push(&rest[..end]);
        rest = rest[end..].trim_start();
    }
    parts
}

/// ONNX `StringSplit`: each string's parts along a new last axis (of rank `E` = `D` + 1), padded
/// with empty strings to the most parts of any element, and each element's count of parts.
pub fn string_split<const D: usize, const E: usize>(
    x: StringTensor<D>,
    delimiter: Option<&str>,
    max_splits: Option<usize>,
    device: &Device,
) -> (StringTensor<E>, Tensor<D, Int>) {
    let parts: Vec<Vec<&str>> = x.values.iter().map(|s| split_parts(s, delimiter, max_splits)).collect();
    let width = parts.iter().map(Vec::len).max().unwrap_or(0);
    let mut values = Vec::with_capacity(parts.len() * width);
    for p in &parts {
        values.extend(p.iter().map(|s| s.to_string()));
        values.resize(values.len() + width - p.len(), String::new());
    }
    let mut shape = [width; E];
    shape[..D].copy_from_slice(&x.shape);
    let counts: Vec<i64> = parts.iter().map(|p| p.len() as i64).collect();
    (StringTensor::new(values, shape), Tensor::from_data(TensorData::new(counts, x.shape), device))
}

/// `s` in one case, character by character as a locale's `towlower`/`towupper` do: only ASCII
/// letters (`ascii`: the C locale), or each character whose Unicode counterpart is one
/// character (English locales: `ß` stays, it has no one-character capital).
fn change_case(s: &str, upper: bool, ascii: bool) -> String {
    s.chars()
        .map(|c| match (ascii, upper) {
            (true, true) => c.to_ascii_uppercase(),
            (true, false) => c.to_ascii_lowercase(),
            (false, _) => {
                let mut mapped = if upper { c.to_uppercase().collect::<Vec<_>>() } else { c.to_lowercase().collect() };
                if mapped.len() == 1 {
                    mapped.remove(0)
                } else {
                    c
                }
            }
        })
        .collect()
}

/// ONNX `StringNormalizer` of a `[C]` or `[1, C]` tensor, as ONNX Runtime's: elements equal to
/// a stopword removed (ignoring case unless `case_sensitive`), then the case changed (only
/// ASCII letters with `ascii_case`, the C locale). When nothing is left, the output is one
/// empty string (`[1]` or `[1, 1]`).
pub fn string_normalize<const D: usize>(
    x: StringTensor<D>,
    stopwords: &[&str],
    case_sensitive: bool,
    case: CaseChange,
    ascii_case: bool,
) -> StringTensor<D> {
    assert!(D == 1 || (D == 2 && x.shape[0] == 1), "StringNormalizer takes [C] or [1, C], got {:?}", x.shape);
    let lower = |s: &str| change_case(s, false, ascii_case);
    let lowered: Vec<String> = stopwords.iter().map(|w| lower(w)).collect();
    let is_stopword = |s: &str| if case_sensitive { stopwords.contains(&s) } else { lowered.contains(&lower(s)) };
    let mut kept: Vec<String> = x
        .values
        .into_iter()
        .filter(|s| !is_stopword(s))
        .map(|s| match case {
            CaseChange::Lower => change_case(&s, false, ascii_case),
            CaseChange::Upper => change_case(&s, true, ascii_case),
            CaseChange::Keep => s,
        })
        .collect();
    if kept.is_empty() {
        kept.push(String::new());
    }
    let mut shape = [1; D];
    shape[D - 1] = kept.len();
    StringTensor::new(kept, shape)
}

/// ONNX `RegexFullMatch`: whether each whole string matches `pattern` (the import checked it
/// and anchored it at both ends).
///
/// # Panics
/// If `pattern` is not a valid pattern (the import never emits one).
pub fn regex_full_match<const D: usize>(x: StringTensor<D>, pattern: &str, device: &Device) -> Tensor<D, Bool> {
    let regex = regex_automata::meta::Regex::new(pattern)
        .unwrap_or_else(|e| panic!("RegexFullMatch pattern `{pattern}` checked at import is invalid: {e}"));
    let matches: Vec<bool> = x.values.iter().map(|s| regex.is_match(s.as_str())).collect();
    Tensor::from_data(TensorData::new(matches, x.shape), device)
}

/// A LabelEncoder key: a string, an integer, or a float's bits (NaN one key, -0 as +0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LabelKey<'a> {
    /// A string key.
    Str(&'a str),
    /// An integer key.
    Int(i64),
    /// A float key ([`LabelKey::float`]).
    Float(u64),
}

impl LabelKey<'static> {
    /// The key of a float: equal floats (NaN to NaN, as LabelEncoder-4 asks) give equal keys.
    pub fn float(value: f64) -> Self {
        let canonical = if value.is_nan() {
            f64::NAN
        } else if value == 0.0 {
            0.0
        } else {
            value
        };
        Self::Float(canonical.to_bits())
    }
}

/// A tensor LabelEncoder reads keys from or writes values to.
pub trait Labelled<const D: usize>: Sized {
    /// A value of the output (`&'static str`, `i64`, `f64`).
    type Value: Clone;

    /// The shape and each element mapped through `f` with its key.
    fn map_keys<T>(self, f: impl FnMut(LabelKey<'_>) -> T) -> ([usize; D], Vec<T>);

    /// A tensor of `values`.
    fn from_values(shape: [usize; D], values: Vec<Self::Value>, device: &Device) -> Self;
}

impl<const D: usize> Labelled<D> for StringTensor<D> {
    type Value = &'static str;

    fn map_keys<T>(self, f: impl FnMut(LabelKey<'_>) -> T) -> ([usize; D], Vec<T>) {
        (self.shape, self.values.iter().map(|s| LabelKey::Str(s)).map(f).collect())
    }

    fn from_values(shape: [usize; D], values: Vec<&'static str>, _device: &Device) -> Self {
        StringTensor::new(values.into_iter().map(String::from).collect(), shape)
    }
}

impl<const D: usize> Labelled<D> for Tensor<D, Int> {
    type Value = i64;

    fn map_keys<T>(self, f: impl FnMut(LabelKey<'_>) -> T) -> ([usize; D], Vec<T>) {
        let shape = self.dims();
        (shape, self.into_data().iter::<i64>().map(LabelKey::Int).map(f).collect())
    }

    fn from_values(shape: [usize; D], values: Vec<i64>, device: &Device) -> Self {
        Tensor::from_data(TensorData::new(values, shape), device)
    }
}

impl<const D: usize> Labelled<D> for Tensor<D> {
    type Value = f64;

    fn map_keys<T>(self, f: impl FnMut(LabelKey<'_>) -> T) -> ([usize; D], Vec<T>) {
        let shape = self.dims();
        (shape, self.into_data().iter::<f64>().map(LabelKey::float).map(f).collect())
    }

    fn from_values(shape: [usize; D], values: Vec<f64>, device: &Device) -> Self {
        Tensor::from_data(TensorData::new(values, shape), device)
    }
}

/// ai.onnx.ml `LabelEncoder`: each element of `x` looked up in `keys`, replaced by the value at
/// the same position (the first, if a key repeats), `default` when no key matches.
pub fn label_encode<const D: usize, X: Labelled<D>, Y: Labelled<D>>(
    x: X,
    keys: &[LabelKey<'_>],
    values: &[Y::Value],
    default: Y::Value,
    device: &Device,
) -> Y {
    let mut table = BTreeMap::new();
    for (key, value) in keys.iter().zip(values) {
        table.entry(*key).or_insert(value);
    }
    let (shape, out) = x.map_keys(|key| table.get(&key).map_or_else(|| default.clone(), |&v| v.clone()));
    Y::from_values(shape, out, device)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn strings<const D: usize>(values: &[&str], shape: [usize; D]) -> StringTensor<D> {
        StringTensor::new(values.iter().map(|s| s.to_string()).collect(), shape)
    }

    // Expected values: Python's str.split, which ONNX's reference StringSplit calls.
    #[test]
    fn split_follows_python_str_split() {
        assert_eq!(split_parts("  a  b c ", None, None), ["a", "b", "c"]);
        assert_eq!(split_parts("  a  b c ", None, Some(1)), ["a", "b c "]);
        assert_eq!(split_parts("o-n--x-", Some("-"), None), ["o", "n", "", "x", ""]);
        assert_eq!(split_parts("o-n--x-", Some("-"), Some(2)), ["o", "n", "-x-"]);
        assert_eq!(split_parts("", Some("-"), None), [""]);
        assert!(split_parts("   ", None, None).is_empty());
        assert_eq!(split_parts("a b", None, Some(0)), ["a b"]);
    }

    #[test]
    fn split_pads_to_the_longest() {
        let device = Device::default();
        let (parts, counts) = string_split::<1, 2>(strings(&["a.b.c", "d"], [2]), Some("."), None, &device);
        assert_eq!(parts.dims(), [2, 3]);
        assert_eq!(parts.values(), ["a", "b", "c", "d", "", ""]);
        assert_eq!(counts.into_data().iter::<i64>().collect::<Vec<_>>(), vec![3, 1]);
    }

    #[test]
    fn concat_broadcasts() {
        let joined = string_concat::<2, 1, 2>(strings(&["a", "b"], [2, 1]), strings(&["x", "y", "z"], [3]));
        assert_eq!(joined.dims(), [2, 3]);
        assert_eq!(joined.values(), ["ax", "ay", "az", "bx", "by", "bz"]);
    }

    // Expected values: ONNX Runtime's StringNormalizer (an empty result is one empty string).
    #[test]
    fn normalize_removes_stopwords_then_changes_case() {
        let x = strings(&["Monday", "tuesday", "monday"], [1, 3]);
        let y = string_normalize(x.clone(), &["monday"], false, CaseChange::Upper, false);
        assert_eq!((y.dims(), y.values()), ([1, 1], &["TUESDAY".to_string()][..]));
        let y = string_normalize(x, &["monday"], true, CaseChange::Keep, false);
        assert_eq!(y.values(), ["Monday", "tuesday"]);
        let y = string_normalize(strings(&["monday"], [1]), &["monday"], true, CaseChange::Lower, false);
        assert_eq!((y.dims(), y.values()), ([1], &[String::new()][..]));
    }

    // Expected values: glibc's towupper (en_US.UTF-8) and the C locale's.
    #[test]
    fn case_changes_map_one_character_to_one() {
        assert_eq!(change_case("straße Äpfel", true, false), "STRAßE ÄPFEL");
        assert_eq!(change_case("straße Äpfel", true, true), "STRAßE ÄPFEL");
        assert_eq!(change_case("ÄPFEL", false, true), "Äpfel");
        assert_eq!(change_case("ÄPFEL", false, false), "äpfel");
    }

    #[test]
    fn full_match_is_anchored() {
        let device = Device::default();
        let x = strings(&["www.a.com", "www.a.com.uk", "wwwxa.com"], [3]);
        let m = regex_full_match(x, r"^(?:www\.[0-9A-Za-z_.-]+\.com)$", &device);
        assert_eq!(m.into_data().iter::<bool>().collect::<Vec<_>>(), vec![true, false, false]);
    }

    #[test]
    fn label_encoder_maps_and_defaults() {
        let device = Device::default();
        let keys = [LabelKey::Str("a"), LabelKey::Str("b")];
        let y: Tensor<1, Int> = label_encode(strings(&["b", "c", "a"], [3]), &keys, &[1i64, 2], -1, &device);
        assert_eq!(y.into_data().iter::<i64>().collect::<Vec<_>>(), vec![2, -1, 1]);
        let floats = Tensor::<1>::from_data(TensorData::new(vec![f32::NAN, -0.0, 2.0], [3]), &device);
        let keys = [LabelKey::float(f64::NAN), LabelKey::float(0.0)];
        let y: StringTensor<1> = label_encode(floats, &keys, &["nan", "zero"], "other", &device);
        assert_eq!(y.values(), ["nan", "zero", "other"]);
    }
}
