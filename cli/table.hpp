#pragma once
// A small text-table printer for the CLI (Debian has no packaged one).
#include <ostream>
#include <string>
#include <vector>

namespace wstune::cli {

/// Columns of text, left-aligned unless the cell looks numeric.
class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  /// Adds one row; missing cells print empty, extra cells are kept.
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  /// Writes header, a rule and the rows, columns separated by two spaces.
  void print(std::ostream& os) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace wstune::cli
