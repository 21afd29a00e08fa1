//! Statements as interned text, each split into a template (the text around its integer
//! literals) and the literals' values, so that calls differing only in numbers (a peer, a
//! count, an offset) are recognised as the same statement shape.

use std::collections::HashMap;

/// Interned statements and their templates.
#[derive(Default)]
pub struct Lines {
    ids: HashMap<String, u32>,
    /// The distinct statements, by id.
    text: Vec<String>,
    /// Per statement id, its template and literal values.
    split: Vec<(u32, Vec<i64>)>,
    template_ids: HashMap<Vec<String>, u32>,
    /// The distinct templates: the text pieces between literals (one more than literals).
    templates: Vec<Vec<String>>,
}

impl Lines {
    /// The id of `line`.
    pub fn id(&mut self, line: String) -> u32 {
        if let Some(&id) = self.ids.get(&line) {
            return id;
        }
        let id = self.text.len() as u32;
        let (pieces, values) = literals(&line);
        let next = self.templates.len() as u32;
        let template = *self.template_ids.entry(pieces.clone()).or_insert(next);
        if template == next {
            self.templates.push(pieces);
        }
        self.split.push((template, values));
        self.text.push(line.clone());
        self.ids.insert(line, id);
        id
    }

    /// The text of statement `id`.
    pub fn text(&self, id: u32) -> &str {
        &self.text[id as usize]
    }

    /// The template of statement `id`.
    pub fn template(&self, id: u32) -> u32 {
        self.split[id as usize].0
    }

    /// The integer literals of statement `id`, in order.
    pub fn values(&self, id: u32) -> &[i64] {
        &self.split[id as usize].1
    }

    /// The text pieces of template `template`, one more than its literals.
    pub fn pieces(&self, template: u32) -> &[String] {
        &self.templates[template as usize]
    }
}

/// Splits a C statement at its integer literals: decimal digit runs outside string literals
/// that are not part of a name or of a floating-point or hexadecimal number. Returns the text
/// pieces (one more than the values) and the values.
fn literals(line: &str) -> (Vec<String>, Vec<i64>) {
    let bytes = line.as_bytes();
    let (mut pieces, mut values) = (Vec::new(), Vec::new());
    let (mut start, mut i, mut quoted) = (0, 0, false);
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'.';
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'"' && (i == 0 || bytes[i - 1] != b'\\') {
            quoted = !quoted;
        }
        if quoted || !b.is_ascii_digit() || (i > 0 && word(bytes[i - 1])) {
            i += 1;
            continue;
        }
        let end = i + bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
        let value = line[i..end].parse::<i64>();
        match value {
            Ok(v) if end == bytes.len() || !word(bytes[end]) => {
                pieces.push(line[start..i].to_string());
                values.push(v);
                start = end;
            }
            _ => {}
        }
        i = end;
    }
    pieces.push(line[start..].to_string());
    (pieces, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_decimal_integers_outside_names_strings_and_other_numbers() {
        let (pieces, values) = literals("h(1.5, \"k1\", 0x10, MPI_2INT, -3, B(2)+16);");
        assert_eq!(values, vec![3, 2, 16]);
        assert_eq!(
            pieces,
            vec!["h(1.5, \"k1\", 0x10, MPI_2INT, -", ", B(", ")+", ");"]
        );
    }

    #[test]
    fn statements_differing_in_numbers_share_a_template() {
        let mut lines = Lines::default();
        let a = lines.id("MPI_Send(B(0)+8, 4, 1);".into());
        let b = lines.id("MPI_Send(B(0)+16, 4, 3);".into());
        let c = lines.id("MPI_Recv(B(0)+16, 4, 3);".into());
        assert_eq!(lines.id("MPI_Send(B(0)+8, 4, 1);".into()), a);
        assert_eq!(lines.template(a), lines.template(b));
        assert_ne!(lines.template(a), lines.template(c));
        assert_eq!(lines.values(b), &[0, 16, 4, 3]);
        assert_eq!(lines.text(c), "MPI_Recv(B(0)+16, 4, 3);");
    }
}
