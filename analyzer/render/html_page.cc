#include "analyzer/render/html_page.h"

namespace incise::analyzer {

void writeHtmlPageStart(std::ostream& out, const std::string& title, const std::string& style) {
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
      << escapeXml(title) << "</title>\n"
      << "<style>body{margin:8px;font-family:sans-serif;background:#fdfaf0}"
         "#bar{margin-bottom:6px}#tip{position:absolute;display:none;background:#ffffe0;"
         "border:1px solid #888;padding:3px 6px;font:12px monospace;pointer-events:none;"
         "max-width:90vw;overflow-wrap:anywhere}"
      << style << "</style>\n</head>\n<body>\n";
}

void writeHtmlPageEnd(std::ostream& out, const char* script) {
  out << "<div id=\"tip\"></div>\n<script>" << script << "</script>\n</body>\n</html>\n";
}

}  // namespace incise::analyzer
