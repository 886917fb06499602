#include "analyzer/render/html_page.h"

namespace incise::analyzer {

std::string escapeXml(const std::string& text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        escaped += "&amp;";
        break;
      case '<':
        escaped += "&lt;";
        break;
      case '>':
        escaped += "&gt;";
        break;
      case '"':
        escaped += "&quot;";
        break;
      case '\'':
        escaped += "&#39;";
        break;
      default:
        escaped += c;
    }
  }
  return escaped;
}

void writeHtmlPageStart(std::ostream& out, const std::string& title, const std::string& style) {
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
      << escapeXml(title) << "</title>\n"
      << "<style>body{margin:8px;font-family:sans-serif;background:#fdfaf0}"
         "#bar{margin-bottom:6px}#tip{position:absolute;display:none;background:#ffffe0;"
         "border:1px solid #888;padding:3px 6px;font:12px monospace;pointer-events:none}"
      << style << "</style>\n</head>\n<body>\n";
}

void writeHtmlPageEnd(std::ostream& out, const char* script) {
  out << "<div id=\"tip\"></div>\n<script>" << script << "</script>\n</body>\n</html>\n";
}

}  // namespace incise::analyzer
