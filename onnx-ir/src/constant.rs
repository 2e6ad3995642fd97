//! The `Constant` op's value, from whichever attribute holds it (`value`, and from opset 12
//! `value_float(s)` / `value_int(s)`).

use crate::attributes::Attributes;
use crate::tensor::TensorData;
use crate::types::DType;

pub fn parse(attrs: &Attributes) -> Result<TensorData, String> {
    let err = |e: crate::error::Error| e.to_string();
    if let Some(t) = attrs.tensor("value").map_err(err)? {
        return Ok(t);
    }
    let le = |v: Vec<u8>, dtype, shape| TensorData::new(dtype, shape, v);
    if let Some(f) = attrs.float("value_float").map_err(err)? {
        return Ok(le(f.to_le_bytes().to_vec(), DType::F32, vec![]));
    }
    if let Some(fs) = attrs.floats("value_floats").map_err(err)? {
        let n = fs.len();
        return Ok(le(fs.iter().flat_map(|v| v.to_le_bytes()).collect(), DType::F32, vec![n]));
    }
    if let Some(i) = attrs.int("value_int").map_err(err)? {
        return Ok(le(i.to_le_bytes().to_vec(), DType::I64, vec![]));
    }
    if let Some(is) = attrs.ints("value_ints").map_err(err)? {
        let n = is.len();
        return Ok(le(is.iter().flat_map(|v| v.to_le_bytes()).collect(), DType::I64, vec![n]));
    }
    let names: Vec<_> = attrs.names().collect();
    Err(format!("unsupported value attribute(s) {names:?} (string and sparse constants are not supported)"))
}
