//! Where `--report` and `--bench-report` write: a Markdown file (a chapter of the book) that
//! holds the table between two marker lines. A file without them is refused, before the suite
//! runs and again when writing: the table never replaces a file or lands where nobody reads it.

use std::path::PathBuf;

/// The results table's markers when the run names none (the real models' table).
pub const REPORT_START: &str = "<!-- onnx-backend report: start -->";
const REPORT_END: &str = "<!-- onnx-backend report: end -->";
/// The benchmark table's markers when the run names none.
const BENCH_START: &str = "<!-- onnx-backend bench: start -->";
const BENCH_END: &str = "<!-- onnx-backend bench: end -->";

/// A file and the pair of marker lines its table goes between.
pub struct ReportFile {
    path: PathBuf,
    start: String,
    end: String,
}

impl ReportFile {
    /// The results table (`--report`): between `<!-- onnx-backend report (NAME): start -->` and
    /// its end line, or the plain markers without a name.
    pub fn results(path: PathBuf, name: Option<&str>) -> Result<Self, String> {
        match name {
            None => Self::new(path, REPORT_START, REPORT_END),
            Some(name) => Self::new(
                path,
                &format!("<!-- onnx-backend report ({name}): start -->"),
                &format!("<!-- onnx-backend report ({name}): end -->"),
            ),
        }
    }

    /// The benchmark table (`--bench-report`): between `<!-- onnx-backend bench (NAME): start -->`
    /// and its end line, or the plain markers without a name.
    pub fn bench(path: PathBuf, name: Option<&str>) -> Result<Self, String> {
        match name {
            None => Self::new(path, BENCH_START, BENCH_END),
            Some(name) => Self::new(
                path,
                &format!("<!-- onnx-backend bench ({name}): start -->"),
                &format!("<!-- onnx-backend bench ({name}): end -->"),
            ),
        }
    }

    /// Refused unless the file exists and holds both markers, the start first.
    fn new(path: PathBuf, start: &str, end: &str) -> Result<Self, String> {
        let file = Self { path, start: start.to_string(), end: end.to_string() };
        file.markers_in(&file.read()?)?;
        Ok(file)
    }

    /// Replaces what lies between the markers with `table`; the rest of the file is kept.
    pub fn write(&self, table: &str) -> Result<(), String> {
        let existing = self.read()?;
        let (start, end) = self.markers_in(&existing)?;
        let text = format!("{}{}\n{table}{}", &existing[..start], self.start, &existing[end..]);
        std::fs::write(&self.path, text).map_err(|e| format!("cannot write {}: {e}", self.path.display()))
    }

    fn read(&self) -> Result<String, String> {
        std::fs::read_to_string(&self.path)
            .map_err(|e| format!("cannot read the report file {}: {e}", self.path.display()))
    }

    /// Where the start marker and the end marker begin in `text`.
    fn markers_in(&self, text: &str) -> Result<(usize, usize), String> {
        match (text.find(&self.start), text.find(&self.end)) {
            (Some(start), Some(end)) if start < end => Ok((start, end)),
            _ => Err(format!(
                "{} has no `{}` and `{}` lines, in that order, to write the table between: add them where the \
                 table belongs",
                self.path.display(),
                self.start,
                self.end
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of this test's own under the system's temporary folder.
    fn scratch(name: &str, text: Option<&str>) -> PathBuf {
        let path = std::env::temp_dir().join(format!("onnx-backend-report-{}-{name}.md", std::process::id()));
        match text {
            Some(text) => std::fs::write(&path, text).expect("a temporary file"),
            None => {
                let _ = std::fs::remove_file(&path);
            }
        }
        path
    }

    #[test]
    fn the_table_replaces_what_lies_between_the_markers_and_nothing_else() {
        let chapter = "# Zoo\n\nprose\n\n<!-- onnx-backend report (zoo): start -->\nold table\n\
                       <!-- onnx-backend report (zoo): end -->\n\nmore prose\n";
        let path = scratch("named", Some(chapter));
        ReportFile::results(path.clone(), Some("zoo")).expect("markers found").write("new table\n").expect("written");
        let written = std::fs::read_to_string(&path).expect("readable");
        std::fs::remove_file(&path).expect("removable");
        assert_eq!(
            written,
            "# Zoo\n\nprose\n\n<!-- onnx-backend report (zoo): start -->\nnew table\n\
             <!-- onnx-backend report (zoo): end -->\n\nmore prose\n"
        );
    }

    #[test]
    fn a_file_without_the_markers_is_refused_and_left_alone() {
        let chapter = "# Performance\n\n<!-- onnx-backend bench: start -->\n<!-- onnx-backend bench: end -->\n";
        let path = scratch("other-markers", Some(chapter));
        // The bench markers are there, the results table's are not; nor are the named bench's.
        let refused =
            [ReportFile::results(path.clone(), None).err(), ReportFile::bench(path.clone(), Some("zoo")).err()];
        let unchanged = std::fs::read_to_string(&path).expect("readable");
        std::fs::remove_file(&path).expect("removable");
        for error in refused {
            let error = error.expect("refused");
            assert!(error.contains("has no `<!-- onnx-backend"), "{error}");
        }
        assert_eq!(unchanged, chapter);
    }

    #[test]
    fn markers_out_of_order_or_a_missing_file_are_refused() {
        let path =
            scratch("reversed", Some("<!-- onnx-backend report: end -->\n<!-- onnx-backend report: start -->\n"));
        let reversed = ReportFile::results(path.clone(), None).err();
        std::fs::remove_file(&path).expect("removable");
        assert!(reversed.is_some_and(|e| e.contains("in that order")));
        let missing = ReportFile::bench(scratch("missing", None), None).err();
        assert!(missing.is_some_and(|e| e.contains("cannot read the report file")));
    }
}
