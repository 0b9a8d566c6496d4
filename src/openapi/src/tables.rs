//! The field tables of `docs/`, written from the declarations like the document: a page marks
//! where a record's table goes (`<!-- fields: Customer -->` … `<!-- /fields -->`), and
//! `merchantd openapi --docs docs` writes each table between its marks. A test holds every
//! page to what this writes, so a field's kind, limit, write rule and words are said once, on
//! the field.

use domain::record::{Access, FieldDecl, Kind, RecordDecl};

const OPEN: &str = "<!-- fields: ";
const CLOSE: &str = "<!-- /fields -->";

/// The record whose schema or noun-derived name is `name` (`Customer`, `Session`).
fn record(name: &str) -> Option<&'static RecordDecl> {
    domain::registry::declarations()
        .into_iter()
        .find(|d| d.schema == name || crate::records::schema_name(d.noun) == name)
}

fn kind(field: &FieldDecl) -> String {
    let limit = |what: &str| match field.limits.max_len {
        Some(max) => format!("{what} ≤ {max}"),
        None => what.to_owned(),
    };
    let range = |what: &str| match (field.limits.min, field.limits.max) {
        (Some(min), Some(max)) => format!("{what} from {min} to {max}"),
        _ => what.to_owned(),
    };
    match field.kind {
        Kind::Id => "id".into(),
        Kind::Integer => range("integer"),
        Kind::Money => "money (minor units)".into(),
        Kind::Rate => "rate (a fraction)".into(),
        Kind::Date => "date-time".into(),
        Kind::Bool => "boolean".into(),
        Kind::Number => range("number"),
        Kind::Decimal => "decimal".into(),
        Kind::Text => limit("text"),
        Kind::Url => limit("URL"),
        Kind::Ids | Kind::Categories => "ids".into(),
        Kind::Texts => "texts".into(),
        Kind::Images => "image names".into(),
        Kind::StoreRoles => "store → role".into(),
        Kind::Choice(words) => {
            let words: Vec<String> = words.iter().map(|w| format!("`{w}`")).collect();
            format!("one of {}", words.join(", "))
        }
        Kind::Children(inner) => format!("{} records by key", inner.noun.to_lowercase()),
        Kind::Json(_) => "object".into(),
    }
}

fn rule(field: &FieldDecl) -> String {
    let mut words = Vec::new();
    match field.access {
        Access::ReadOnly => words.push("read only".to_owned()),
        Access::Required if field.create_only => {
            words.push("required; set by the create only".into())
        }
        Access::Required => words.push("required".into()),
        Access::Once => words.push("shown once".into()),
        Access::WriteOnly => words.push("write only".into()),
        _ if field.create_only => words.push("set by the create only".into()),
        _ => {}
    }
    if let Some(header) = field.filter {
        words.push(format!("filter `{header}`"));
    }
    let doc = field.doc.replace('\n', " ");
    match (words.is_empty(), doc.is_empty()) {
        (true, _) => doc,
        (false, true) => words.join("; "),
        (false, false) => {
            // "read only: when it opened."
            let mut chars = doc.chars();
            let first = chars.next().map(|c| c.to_lowercase().collect::<String>());
            format!(
                "{}: {}{}",
                words.join("; "),
                first.unwrap_or_default(),
                chars.as_str()
            )
        }
    }
}

/// A record's table: every field a read shows or a write takes, in declaration order.
pub fn table(decl: &RecordDecl) -> String {
    let mut text = String::from("| field | kind | rule |\n|---|---|---|\n");
    for field in decl.fields {
        if field.name.is_empty() || matches!(field.access, Access::Hidden) || field.name == "id" {
            continue;
        }
        text.push_str(&format!(
            "| `{}` | {} | {} |\n",
            field.name,
            kind(field),
            rule(field)
        ));
    }
    text
}

/// `page` with each marked table written from its declaration; an unknown record name is an
/// error naming it.
pub fn refresh(page: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = page;
    while let Some(start) = rest.find(OPEN) {
        let after = &rest[start + OPEN.len()..];
        let Some((name, _)) = after.split_once(" -->") else {
            return Err("a fields mark is not closed with -->".into());
        };
        let Some(end) = after.find(CLOSE) else {
            return Err(format!("the fields of {name} have no {CLOSE}"));
        };
        let decl = record(name.trim()).ok_or_else(|| format!("no record is named {name}"))?;
        out.push_str(&rest[..start]);
        out.push_str(&format!("{OPEN}{name} -->\n{}{CLOSE}", table(decl)));
        rest = &after[end + CLOSE.len()..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marked_table_is_written_from_the_declaration() {
        let page = "# Registers\n\n<!-- fields: Register -->\nold\n<!-- /fields -->\n\nAfter.\n";
        let written = refresh(page).unwrap();
        assert!(
            written.contains("| `name` | text ≤ 200 | required |"),
            "{written}"
        );
        assert!(
            written.ends_with("<!-- /fields -->\n\nAfter.\n"),
            "{written}"
        );
        assert_eq!(refresh(&written).unwrap(), written);
        assert!(refresh("<!-- fields: Nothing -->\n<!-- /fields -->").is_err());
    }
}
