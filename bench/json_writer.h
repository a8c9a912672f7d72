// A minimal JSON emitter (objects, arrays, strings, numbers, booleans), enough for the results file
// without another dependency.
#ifndef MPIX_SPARSE_BENCH_JSON_WRITER_H
#define MPIX_SPARSE_BENCH_JSON_WRITER_H

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace bench {

class JsonWriter {
  public:
    void begin_object() { open('{'); }
    void end_object() { close('}'); }
    void begin_array() { open('['); }
    void end_array() { close(']'); }

    // Inside an object, every value is preceded by its key.
    void key(const std::string &k) {
        separate();
        string_literal(k);
        out_ += ": ";
        after_key_ = true;
    }

    void value(const std::string &s) {
        separate();
        string_literal(s);
    }
    void value(const char *s) { value(std::string(s)); }
    void value(bool b) {
        separate();
        out_ += b ? "true" : "false";
    }
    void value(std::int64_t v) {
        separate();
        out_ += std::to_string(v);
    }
    void value(double v) {
        separate();
        if (!std::isfinite(v)) {  // JSON has no NaN or infinity
            out_ += "null";
            return;
        }
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.17g", v);
        out_ += buf;
    }

    const std::string &str() const { return out_; }

  private:
    void open(char c) {
        separate();
        out_ += c;
        first_.push_back(true);
    }
    void close(char c) {
        const bool empty = first_.back();
        first_.pop_back();
        if (!empty) newline();
        out_ += c;
    }
    // Comma and indentation before a value, unless it directly follows its key.
    void separate() {
        if (after_key_) {
            after_key_ = false;
            return;
        }
        if (first_.empty()) return;
        if (!first_.back()) out_ += ',';
        first_.back() = false;
        newline();
    }
    void newline() {
        out_ += '\n';
        out_.append(2 * first_.size(), ' ');
    }
    void string_literal(const std::string &s) {
        out_ += '"';
        for (const char ch : s) {
            const auto c = static_cast<unsigned char>(ch);
            switch (c) {
            case '"': out_ += "\\\""; break;
            case '\\': out_ += "\\\\"; break;
            case '\n': out_ += "\\n"; break;
            case '\t': out_ += "\\t"; break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out_ += buf;
                } else {
                    out_ += static_cast<char>(c);
                }
            }
        }
        out_ += '"';
    }

    std::string out_;
    std::vector<bool> first_;  // per open container: nothing written in it yet
    bool after_key_ = false;
};

}  // namespace bench

#endif
