#include "report.h"

#include "json_writer.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

namespace bench {

namespace {

constexpr int kSizeWidth = 10;
constexpr int kMinWidth = 10;

std::string format_value(const Value &v, int precision) {
    char buf[64];
    if (const auto *i = std::get_if<std::int64_t>(&v)) {
        std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(*i));
    } else if (const auto *d = std::get_if<double>(&v)) {
        if (precision == Column::kGeneral)
            std::snprintf(buf, sizeof buf, "%.4g", *d);
        else
            std::snprintf(buf, sizeof buf, "%.*f", precision, *d);
    } else if (const auto *s = std::get_if<std::string>(&v)) {
        return *s;
    } else if (const auto *b = std::get_if<bool>(&v)) {
        return *b ? "yes" : "no";
    } else {
        return "[...]";
    }
    return buf;
}

std::string pad(const std::string &s, int width, bool left) {
    const int fill = width - static_cast<int>(s.size());
    if (fill <= 0) return s;
    const std::string spaces(static_cast<std::size_t>(fill), ' ');
    return left ? s + spaces : spaces + s;
}

int width_of(const Column &c) {
    return std::max(kMinWidth, static_cast<int>(c.header.size()) + 2);
}

void write_value(JsonWriter &w, const Value &v) {
    if (const auto *i = std::get_if<std::int64_t>(&v)) {
        w.value(*i);
    } else if (const auto *d = std::get_if<double>(&v)) {
        w.value(*d);
    } else if (const auto *s = std::get_if<std::string>(&v)) {
        w.value(*s);
    } else if (const auto *b = std::get_if<bool>(&v)) {
        w.value(*b);
    } else if (const auto *texts = std::get_if<std::vector<std::string>>(&v)) {
        w.begin_array();
        for (const std::string &item : *texts)
            w.value(item);
        w.end_array();
    } else {
        w.begin_array();
        for (const double item : std::get<std::vector<double>>(v))
            w.value(item);
        w.end_array();
    }
}

void write_fields(JsonWriter &w, const Record &r) {
    for (const auto &[key, value] : r.fields()) {
        w.key(key);
        write_value(w, value);
    }
}

}  // namespace

const Value *Record::find(const std::string &key) const {
    for (const auto &f : fields_)
        if (f.first == key) return &f.second;
    return nullptr;
}

void Record::set(const std::string &key, Value v) {
    for (auto &f : fields_) {
        if (f.first == key) {
            f.second = std::move(v);
            return;
        }
    }
    fields_.emplace_back(key, std::move(v));
}

Table::Table(std::vector<Column> columns, bool full) {
    for (Column &c : columns)
        if (full || !c.full_only) columns_.push_back(std::move(c));
}

std::string Table::header() const {
    std::string line;
    for (std::size_t i = 0; i < columns_.size(); ++i)
        line += i == 0 ? pad("# " + columns_[i].header, kSizeWidth, true)
                       : pad(columns_[i].header, width_of(columns_[i]), false);
    return line;
}

std::string Table::row(const Record &r) const {
    std::string line;
    for (std::size_t i = 0; i < columns_.size(); ++i) {
        const Value *v = r.find(columns_[i].key);
        const std::string text = v ? format_value(*v, columns_[i].precision) : "-";
        line += i == 0 ? pad(text, kSizeWidth, true) : pad(text, width_of(columns_[i]), false);
    }
    return line;
}

bool write_json_report(const std::string &path, const Record &metadata, const std::vector<Record> &rows,
                       std::string &error) {
    JsonWriter w;
    w.begin_object();
    write_fields(w, metadata);
    w.key("rows");
    w.begin_array();
    for (const Record &r : rows) {
        w.begin_object();
        write_fields(w, r);
        w.end_object();
    }
    w.end_array();
    w.end_object();

    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << w.str() << '\n';
        if (!out.flush()) {
            error = "cannot write " + tmp;
            return false;
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        error = "cannot rename " + tmp + " to " + path;
        return false;
    }
    return true;
}

}  // namespace bench
