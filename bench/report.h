// Results as records of named values: one record per table row, printed through a column layout
// and written, with every field, to the JSON file.
#ifndef MPIX_SPARSE_BENCH_REPORT_H
#define MPIX_SPARSE_BENCH_REPORT_H

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace bench {

using Value = std::variant<std::int64_t, double, std::string, bool, std::vector<std::string>, std::vector<double>>;

// Named values in insertion order (the JSON file keeps that order).
class Record {
  public:
    void set_int(const std::string &key, std::int64_t v) { set(key, Value(v)); }
    void set_real(const std::string &key, double v) { set(key, Value(v)); }
    void set_text(const std::string &key, std::string v) { set(key, Value(std::move(v))); }
    void set_bool(const std::string &key, bool v) { set(key, Value(v)); }
    void set_list(const std::string &key, std::vector<std::string> v) { set(key, Value(std::move(v))); }
    void set_reals(const std::string &key, std::vector<double> v) { set(key, Value(std::move(v))); }

    const Value *find(const std::string &key) const;
    const std::vector<std::pair<std::string, Value>> &fields() const { return fields_; }

  private:
    void set(const std::string &key, Value v);
    std::vector<std::pair<std::string, Value>> fields_;
};

// A table column: which field, its header, and how to print it.
struct Column {
    static constexpr int kGeneral = -1;  // %.4g rather than fixed decimals
    std::string key;
    std::string header;
    int precision = 2;  // decimals of reals
    bool full_only = false;
};

// OSU-style table: "# Size" left-aligned first, the other columns right-aligned.
class Table {
  public:
    Table(std::vector<Column> columns, bool full);
    std::string header() const;
    std::string row(const Record &r) const;

  private:
    std::vector<Column> columns_;
};

// Writes {metadata fields..., "rows": [row records...]} to path through a temporary file and a
// rename, so that the file is complete JSON even if the run is cut short. False on failure.
bool write_json_report(const std::string &path, const Record &metadata, const std::vector<Record> &rows,
                       std::string &error);

}  // namespace bench

#endif
