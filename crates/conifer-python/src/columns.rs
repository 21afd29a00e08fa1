//! Compact column builders: what crosses into Python is one buffer per column, not one Python
//! object per cell. Integers and floats go as little-endian bytes with a validity mask (numpy
//! reads them without copying cell by cell); text goes as categories, each distinct string
//! once with an `i32` code per row.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use pyo3::IntoPyObjectExt;
use std::collections::HashMap;

/// An integer column (`None` cells allowed).
#[derive(Default)]
pub struct Ints {
    values: Vec<i64>,
    valid: Vec<bool>,
}

impl Ints {
    /// Appends a cell.
    pub fn push(&mut self, v: Option<i64>) {
        self.values.push(v.unwrap_or(0));
        self.valid.push(v.is_some());
    }

    /// Whether any cell is present.
    pub fn any(&self) -> bool {
        self.valid.iter().any(|&v| v)
    }

    /// `("int", values, mask or None)`.
    pub fn into_py(self, py: Python<'_>) -> PyResult<PyObject> {
        let bytes: Vec<u8> = self.values.iter().flat_map(|v| v.to_le_bytes()).collect();
        tagged(py, "int", bytes, &self.valid)
    }
}

/// A float column (`None` cells allowed).
#[derive(Default)]
pub struct Floats {
    values: Vec<f64>,
    valid: Vec<bool>,
}

impl Floats {
    /// Appends a cell.
    pub fn push(&mut self, v: Option<f64>) {
        self.values.push(v.unwrap_or(f64::NAN));
        self.valid.push(v.is_some());
    }

    /// `("float", values, mask or None)`.
    pub fn into_py(self, py: Python<'_>) -> PyResult<PyObject> {
        let bytes: Vec<u8> = self.values.iter().flat_map(|v| v.to_le_bytes()).collect();
        tagged(py, "float", bytes, &self.valid)
    }
}

/// A text column: distinct strings and a code per row (-1 for none).
#[derive(Default)]
pub struct Texts {
    codes: Vec<i32>,
    names: Vec<String>,
    index: HashMap<String, i32>,
}

impl Texts {
    /// Appends a cell.
    pub fn push(&mut self, v: Option<&str>) {
        let code = match v {
            None => -1,
            Some(s) => match self.index.get(s) {
                Some(&c) => c,
                None => {
                    let c = self.names.len() as i32;
                    self.names.push(s.to_string());
                    self.index.insert(s.to_string(), c);
                    c
                }
            },
        };
        self.codes.push(code);
    }

    /// Pads with empty cells up to `rows`.
    pub fn pad(&mut self, rows: usize) {
        self.codes.resize(rows, -1);
    }

    /// Rows so far.
    pub fn len(&self) -> usize {
        self.codes.len()
    }

    /// As integers when every present cell is one (an argument such as `count` or `dest`),
    /// else as categories: `("int", ...)` or `("cat", codes, names)`.
    pub fn into_py_typed(self, py: Python<'_>) -> PyResult<PyObject> {
        let as_ints: Option<Vec<i64>> = self.names.iter().map(|n| n.parse().ok()).collect();
        match as_ints {
            Some(values) => {
                let mut ints = Ints::default();
                for &c in &self.codes {
                    ints.push((c >= 0).then(|| values[c as usize]));
                }
                ints.into_py(py)
            }
            None => self.into_py(py),
        }
    }

    /// `("cat", codes, names)`.
    pub fn into_py(self, py: Python<'_>) -> PyResult<PyObject> {
        let codes: Vec<u8> = self.codes.iter().flat_map(|c| c.to_le_bytes()).collect();
        let items = ("cat", PyBytes::new(py, &codes), self.names.into_py_any(py)?);
        Ok(PyTuple::new(
            py,
            [items.0.into_py_any(py)?, items.1.into_py_any(py)?, items.2],
        )?
        .into_any()
        .unbind())
    }
}

/// `(kind, values, mask)`: the mask is `None` when every cell is present.
fn tagged(py: Python<'_>, kind: &str, values: Vec<u8>, valid: &[bool]) -> PyResult<PyObject> {
    let mask = if valid.iter().all(|&v| v) {
        py.None()
    } else {
        let bytes: Vec<u8> = valid.iter().map(|&v| u8::from(!v)).collect();
        PyBytes::new(py, &bytes).into_any().unbind()
    };
    let items = [
        kind.into_py_any(py)?,
        PyBytes::new(py, &values).into_any().unbind(),
        mask,
    ];
    Ok(PyTuple::new(py, items)?.into_any().unbind())
}
