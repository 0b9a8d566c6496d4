use super::*;

#[test]
fn cells_survive_their_json_form_exactly() {
    let cells = [
        (Kind::Int, Cell::Int(i64::MIN)),
        (Kind::Real, Cell::Real(0.1 + 0.2)),
        (Kind::Real, Cell::Real(f64::MAX)),
        (Kind::Text, Cell::Text("é \"quoted\"\n".into())),
        (Kind::Bytes, Cell::Bytes(vec![0, 255, 10, 13])),
        (Kind::Text, Cell::Null),
    ];
    for (kind, cell) in cells {
        assert_eq!(cell_from_json(kind, &cell_json(&cell)), Ok(cell));
    }
    let text = serde_json::json!("1");
    assert_eq!(cell_from_json(Kind::Int, &text), Err("an integer"));
    let bad = serde_json::json!("not base64!");
    assert_eq!(cell_from_json(Kind::Bytes, &bad), Err("base64 data"));
}

#[test]
fn lines_written_are_lines_read() {
    use domain::fleet::archive::Line;
    let names = vec!["id".to_owned(), "name".to_owned()];
    let table = Line::parse(&table_line("products", &names));
    assert_eq!(
        table,
        Ok(Line::Table {
            table: "products".into(),
            columns: names
        })
    );
    let totals = Totals { tables: 2, rows: 5 };
    assert_eq!(Line::parse(&end_line(totals)), Ok(Line::End(totals)));
}
