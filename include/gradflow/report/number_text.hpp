// number_text.hpp — a number as gradflow writes it in messages, labels and file names: printf's %g, i.e. the
// shortest of fixed and exponent notation with `digits` significant digits and no trailing zeros ("0.001", "1e-05",
// "3.2e+154"). One writer, so that a file name, a message and a figure spell the same value alike.
#pragma once
#include <string>

namespace gradflow {

// "%.<digits>g" of v: 6 digits is printf's "%g" (a learning rate in a train-sweep file name: "0.0003"); 3 digits
// suit a value quoted in a message ("1.34e+154"). NaN and ±Inf as printf writes them ("nan", "inf", "-inf").
std::string number_text(double v, int digits = 6);

}  // namespace gradflow
