//! ai.onnx.ml's ops on a map input (a `FeatureMap` in `forward`): DictVectorizer and CastMap, on
//! the host, as ONNX Runtime computes them.

use crate::strings::StringTensor;
use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use burn::tensor::{DType, Device, Int, Tensor, TensorData};
use core::borrow::Borrow;

/// A map input of a model (ONNX `map(K, V)`, what DictVectorizer and CastMap read): keys to
/// values, ordered by key as ONNX Runtime's `std::map` is, and in `alloc` (no_std models have it).
pub type FeatureMap<K, V> = BTreeMap<K, V>;

/// A map value DictVectorizer gathers into a tensor of its own type.
pub trait MapValue: Clone {
    /// The `[1, V]` tensor of such values.
    type Tensor;
    /// The tensor of `values`.
    fn tensor(values: Vec<Self>, device: &Device) -> Self::Tensor;
    /// The value of a key the map lacks (ONNX Runtime's: 0, or the empty string).
    fn missing() -> Self;
}

impl MapValue for f32 {
    type Tensor = Tensor<2>;
    fn tensor(values: Vec<f32>, device: &Device) -> Tensor<2> {
        let columns = values.len();
        Tensor::from_data(TensorData::new(values, [1, columns]), device)
    }
    fn missing() -> f32 {
        0.0
    }
}

impl MapValue for f64 {
    type Tensor = Tensor<2>;
    fn tensor(values: Vec<f64>, device: &Device) -> Tensor<2> {
        let columns = values.len();
        Tensor::from_data(TensorData::new(values, [1, columns]), (device, DType::F64))
    }
    fn missing() -> f64 {
        0.0
    }
}

impl MapValue for i64 {
    type Tensor = Tensor<2, Int>;
    fn tensor(values: Vec<i64>, device: &Device) -> Tensor<2, Int> {
        let columns = values.len();
        Tensor::from_data(TensorData::new(values, [1, columns]), device)
    }
    fn missing() -> i64 {
        0
    }
}

impl MapValue for String {
    type Tensor = StringTensor<2>;
    fn tensor(values: Vec<String>, _device: &Device) -> StringTensor<2> {
        let columns = values.len();
        StringTensor::new(values, [1, columns])
    }
    fn missing() -> String {
        String::new()
    }
}

/// DictVectorizer: the map's value at each key of `vocabulary`, `V::missing()` where it has none,
/// `[1, V]`; keys outside the vocabulary are ignored.
pub fn dict_vectorize<K, Q, V>(map: &FeatureMap<K, V>, vocabulary: &[&Q], device: &Device) -> V::Tensor
where
    K: Ord + Borrow<Q>,
    Q: Ord + ?Sized,
    V: MapValue,
{
    let values = vocabulary.iter().map(|&key| map.get(key).cloned().unwrap_or_else(V::missing)).collect();
    V::tensor(values, device)
}

/// A CastMap input's value: a float or a string.
pub trait CastMapValue {
    /// As f32 (a string parsed as C's `stof`).
    fn to_float(&self) -> f32;
    /// As int64 (a float truncated, a string parsed as C's `stoll`).
    fn to_int(&self) -> i64;
    /// As a string (a float printed as C's `%f`).
    fn to_text(&self) -> String;
}

impl CastMapValue for f32 {
    fn to_float(&self) -> f32 {
        *self
    }
    fn to_int(&self) -> i64 {
        *self as i64
    }
    fn to_text(&self) -> String {
        match self {
            v if v.is_nan() => if v.is_sign_negative() { "-nan" } else { "nan" }.to_string(),
            v => alloc::format!("{v:.6}"),
        }
    }
}

impl CastMapValue for String {
    fn to_float(&self) -> f32 {
        longest_number_prefix(self).unwrap_or(f32::NAN)
    }
    fn to_int(&self) -> i64 {
        let text = self.trim_start();
        let sign = usize::from(text.starts_with(['+', '-']));
        let digits = text[sign..].bytes().take_while(u8::is_ascii_digit).count();
        text[..sign + digits].parse().unwrap_or(0)
    }
    fn to_text(&self) -> String {
        self.clone()
    }
}

/// The number at the start of `text` (leading whitespace skipped) as `stof` reads it: the longest
/// prefix that is a number, hexadecimal floats (`0x1.8p3`) included; `None` where none is (`stof`
/// throws, the value is then NaN).
fn longest_number_prefix(text: &str) -> Option<f32> {
    let text = text.trim_start();
    if let Some(value) = hex_float_prefix(text) {
        return Some(value);
    }
    let ends = text.char_indices().map(|(i, c)| i + c.len_utf8()).collect::<Vec<_>>();
    ends.into_iter().rev().find_map(|end| text[..end].parse::<f32>().ok())
}

/// A C hexadecimal float at the start of `text`: sign, `0x`, hex digits with an optional point
/// (at least one digit), then an optional binary exponent `p[+-]digits`.
fn hex_float_prefix(text: &str) -> Option<f32> {
    let (negative, rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let digits = rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X"))?;
    let (mut mantissa, mut scale, mut seen, mut point) = (0f64, 0i32, false, false);
    let mut used = 0;
    for c in digits.chars() {
        match (c, c.to_digit(16)) {
            ('.', _) if !point => point = true,
            (_, Some(d)) => {
                mantissa = mantissa * 16.0 + f64::from(d);
                scale -= if point { 4 } else { 0 };
                seen = true;
            }
            _ => break,
        }
        used += c.len_utf8();
    }
    if !seen {
        return None;
    }
    let exponent = digits[used..].strip_prefix(['p', 'P']).and_then(|e| {
        let sign = usize::from(e.starts_with(['+', '-']));
        let count = e[sign..].bytes().take_while(u8::is_ascii_digit).count();
        (count > 0)
            .then(|| e[..sign + count].parse::<i32>().unwrap_or(if e.starts_with('-') { i32::MIN } else { i32::MAX }))
    });
    let magnitude = mantissa * 2f64.powi(scale.saturating_add(exponent.unwrap_or(0)));
    let value = if negative { -magnitude } else { magnitude };
    Some(value as f32)
}

/// The map's values cast by `cast`: in key order (`max_map` None, DENSE), or at column k the value
/// of key k and `pad` where there is none (SPARSE, `max_map` columns).
fn cast_entries<V, T>(map: &FeatureMap<i64, V>, max_map: Option<usize>, pad: T, cast: impl Fn(&V) -> T) -> Vec<T>
where
    T: Clone,
{
    match max_map {
        None => map.values().map(cast).collect(),
        Some(columns) => {
            let mut out = alloc::vec![pad; columns];
            for (key, value) in map.range(0..columns as i64) {
                out[*key as usize] = cast(value);
            }
            out
        }
    }
}

/// CastMap to f32 `[1, N]`.
pub fn cast_map_to_float<V: CastMapValue>(
    map: &FeatureMap<i64, V>,
    max_map: Option<usize>,
    device: &Device,
) -> Tensor<2> {
    f32::tensor(cast_entries(map, max_map, 0.0, V::to_float), device)
}

/// CastMap to int64 `[1, N]`.
pub fn cast_map_to_int<V: CastMapValue>(
    map: &FeatureMap<i64, V>,
    max_map: Option<usize>,
    device: &Device,
) -> Tensor<2, Int> {
    i64::tensor(cast_entries(map, max_map, 0, V::to_int), device)
}

/// CastMap to strings `[1, N]` (ONNX Runtime pads SPARSE columns with `"0.f"`).
pub fn cast_map_to_string<V: CastMapValue>(map: &FeatureMap<i64, V>, max_map: Option<usize>) -> StringTensor<2> {
    let values = cast_entries(map, max_map, "0.f".to_string(), V::to_text);
    let columns = values.len();
    StringTensor::new(values, [1, columns])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "flex")]
    #[test]
    fn a_missing_string_value_is_empty_as_in_onnx_runtime() {
        // ONNX Runtime's DictVectorizer of map(int64, string) writes `""` for a vocabulary key the
        // map lacks (dictvectorizer.cc: `ComputeWithType<int64_t, std::string>(.., "")`).
        let map: FeatureMap<i64, String> = [(1, "a".to_string()), (7, "z".to_string())].into_iter().collect();
        let out = dict_vectorize(&map, &[&7i64, &3, &1], &crate::test_util::device());
        assert_eq!(out.values(), ["z", "", "a"]);
    }

    #[test]
    fn strings_parse_as_c_does() {
        assert_eq!(" 1.5abc".to_string().to_float(), 1.5);
        assert!("abc".to_string().to_float().is_nan());
        // Hexadecimal floats, as strtof reads them: 0x1p3 = 8, -0x.8 = -0.5, 0x1.8p-1 = 0.75.
        assert_eq!("0x1p3".to_string().to_float(), 8.0);
        assert_eq!(" -0x.8z".to_string().to_float(), -0.5);
        assert_eq!("0X1.8p-1".to_string().to_float(), 0.75);
        assert_eq!("0x".to_string().to_float(), 0.0);
        assert_eq!("-42x".to_string().to_int(), -42);
        assert_eq!(1.5f32.to_text(), "1.500000");
    }
}
