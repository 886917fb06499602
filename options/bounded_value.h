// boundedValue<T>(bounds): a Boost.Program_options value parsed by the one
// number parser (options/number_option.h), with its bounds, instead of
// Boost's lexical_cast (which reads "-1" as 18446744073709551615 for an
// unsigned type and "inf" as a double).
//
//   options.add_options()
//     ("threads", boundedValue<unsigned>({.max = 256})->default_value(0), "decoding threads")
//     ("duration,d", boundedValue<double>({.min = 1e-3, .max = 31536000, .unit = "seconds"}),
//      "stop after SECONDS");
//   ... vm["threads"].as<unsigned>() ...
//
// A bad value fails parsing with the parser's message, the option named as
// it was typed: "--threads '100000': expected a whole number from 0 to 256".
#pragma once

#include <boost/program_options.hpp>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "options/number_option.h"

namespace incise::options {

// What every BoundedValue is, whatever its T: lets a command line tell the
// options that carry their own bounds from plain po::value ones.
class BoundedSemantic {
 public:
  virtual ~BoundedSemantic() = default;
};

template <typename T>
class BoundedValue final : public boost::program_options::typed_value<T>, public BoundedSemantic {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
  using Bounds = std::conditional_t<std::is_floating_point_v<T>, RealBounds, WholeBounds>;

 public:
  explicit BoundedValue(Bounds bounds, T* store_to = nullptr)
      : boost::program_options::typed_value<T>(store_to), bounds_(bounds) {
    if constexpr (!std::is_floating_point_v<T>) {
      static_assert(std::is_unsigned_v<T>, "whole-number options are unsigned");
      bounds_.max = std::min<uint64_t>(bounds_.max, std::numeric_limits<T>::max());
    }
  }

  void xparse(boost::any& store, const std::vector<std::string>& tokens) const override {
    namespace po = boost::program_options;
    po::validators::check_first_occurrence(store);
    const std::string& text = po::validators::get_single_string(tokens);
    // Boost puts the option's name, as typed, where %canonical_option% is.
    if constexpr (std::is_floating_point_v<T>) {
      Result<double> value = parseRealNumber("%canonical_option%", text, bounds_);
      if (!value) throw po::error_with_option_name(value.error().message());
      store = static_cast<T>(*value);
    } else {
      Result<uint64_t> value = parseWholeNumber("%canonical_option%", text, bounds_);
      if (!value) throw po::error_with_option_name(value.error().message());
      store = static_cast<T>(*value);
    }
  }

 private:
  Bounds bounds_;
};

template <typename T>
BoundedValue<T>* boundedValue(
    std::conditional_t<std::is_floating_point_v<T>, RealBounds, WholeBounds> bounds,
    T* store_to = nullptr) {
  return new BoundedValue<T>(bounds, store_to);
}

}  // namespace incise::options
