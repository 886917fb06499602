// A short C++ program (a few ms): libstdc++ and libc are mapped by the
// dynamic loader just after exec, the window a /proc/PID/maps read races.
// Prints pid=PID, which the test looks up in the trace.
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

int main() {
  std::vector<std::string> words;
  for (int i = 0; i < 2000; ++i) words.push_back(std::to_string(i * 7919 % 1000));
  std::sort(words.begin(), words.end());
  std::cout << "pid=" << getpid() << "\nfirst=" << words.front() << "\n";
  return 0;
}
