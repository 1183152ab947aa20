#pragma once
// Catch2 matchers for exceptions: the message (what()) contains every given part.
#include <catch2/catch.hpp>

#include <exception>
#include <string>
#include <vector>

namespace testing_support {

class MessageHas : public Catch::MatcherBase<std::exception> {
 public:
  MessageHas(std::initializer_list<std::string> parts) : parts_(parts) {}
  explicit MessageHas(std::string part) : parts_{std::move(part)} {}
  bool match(const std::exception& e) const override {
    const std::string what = e.what();
    for (const std::string& p : parts_)
      if (what.find(p) == std::string::npos) return false;
    return true;
  }
  std::string describe() const override {
    std::string d = "has a message containing";
    for (const std::string& p : parts_) d += " \"" + p + "\"";
    return d;
  }

 private:
  std::vector<std::string> parts_;
};

}  // namespace testing_support
