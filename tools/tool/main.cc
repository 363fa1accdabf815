// The `tinyattn` program: the command line of tool/tool.cc on stdout and stderr.
#include <cstdio>

#include "tool/tool.h"

int main(int argc, char** argv) { return tinyattn_tool::tool_main(argc, argv, stdout, stderr); }
