//! A field's kind (inferred from its type when not said) and access, as declaration tokens.

use proc_macro2::{Span, TokenStream as Tokens};
use quote::quote;
use syn::spanned::Spanned;
use syn::{Expr, GenericArgument, Type};

use crate::attrs::FieldSpec;

/// The type inside `Option<..>` / `Vec<..>` of that name, if `ty` is one.
pub(crate) fn inner<'a>(ty: &'a Type, wrapper: &str) -> Option<&'a Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != wrapper {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first()? {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    }
}

pub(crate) fn is(ty: &Type, name: &str) -> bool {
    matches!(ty, Type::Path(p) if p.path.is_ident(name))
}

/// The kind a field's type implies when its attribute names none.
pub(crate) fn inferred_kind(spec: &FieldSpec) -> syn::Result<String> {
    let ty = inner(&spec.ty, "Option").unwrap_or(&spec.ty);
    let rust = spec.ident.to_string();
    let kind = if is(ty, "i64") {
        if rust.ends_with("_date") {
            "date"
        } else if rust == "id" || rust.ends_with("_id") {
            "id"
        } else {
            "integer"
        }
    } else if is(ty, "String") {
        "text"
    } else if is(ty, "bool") {
        "bool"
    } else if is(ty, "f64") {
        "number"
    } else if inner(ty, "Vec").is_some_and(|t| is(t, "i64")) {
        "ids"
    } else if inner(ty, "Vec").is_some_and(|t| is(t, "String")) {
        "texts"
    } else {
        return Err(syn::Error::new(
            spec.ty.span(),
            "say the field's kind: #[field(kind = \"...\")]",
        ));
    };
    Ok(kind.to_owned())
}

/// `crate::record::Kind::…` for a kind name.
pub(crate) fn kind_tokens(
    kind: &str,
    choices: Option<&Expr>,
    ty: &Type,
    span: Span,
) -> syn::Result<Tokens> {
    let k = quote!(crate::record::Kind);
    Ok(match kind {
        "id" => quote!(#k::Id),
        "integer" => quote!(#k::Integer),
        "text" => quote!(#k::Text),
        "money" => quote!(#k::Money),
        "rate" => quote!(#k::Rate),
        "decimal" => quote!(#k::Decimal),
        "date" => quote!(#k::Date),
        "bool" => quote!(#k::Bool),
        "number" => quote!(#k::Number),
        "ids" => quote!(#k::Ids),
        "texts" => quote!(#k::Texts),
        "categories" => quote!(#k::Categories),
        "images" => quote!(#k::Images),
        "store_roles" => quote!(#k::StoreRoles),
        "url" => quote!(#k::Url),
        "json" => {
            let ty = inner(ty, "Option").unwrap_or(ty);
            quote!(#k::Json(<#ty as crate::record::JsonCell>::SCHEMA))
        }
        "choice" => match choices {
            Some(list) => quote!(#k::Choice(#list)),
            None => {
                let ty = inner(ty, "Option").unwrap_or(ty);
                quote!(#k::Choice(<#ty as crate::record::Choice>::VALUES))
            }
        },
        "children" => {
            let child = inner(ty, "Vec")
                .ok_or_else(|| syn::Error::new(span, "children are a Vec of records"))?;
            quote!(#k::Children(<#child as crate::record::Declared>::DECL))
        }
        other => return Err(syn::Error::new(span, format!("unknown kind \"{other}\""))),
    })
}

pub(crate) fn access_tokens(spec: &FieldSpec) -> Tokens {
    let a = quote!(crate::record::Access);
    if spec.skip || spec.hidden {
        quote!(#a::Hidden)
    } else if spec.read_only || (spec.ident == "id" && !spec.writable) {
        quote!(#a::ReadOnly)
    } else if spec.required {
        quote!(#a::Required)
    } else {
        quote!(#a::Optional)
    }
}

pub(crate) fn opt_str(value: Option<&str>) -> Tokens {
    match value {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}
