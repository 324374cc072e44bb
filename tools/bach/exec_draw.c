// SPDX-License-Identifier: MIT
/* plot and report, run by bach-draw (exec_helper.c) */
#include "cmd.h"

static int run(int argc, char **argv)
{
	return exec_helper("bach-draw", argc, argv);
}

/* help NULL: `bach help NAME` asks the binary that has it (print_help()) */
const struct bach_cmd cmd_plot = {
	.name = "plot",
	.run = run,
	.summary = "pictures: address map, cycle mix, miss ratios, working set",
};

const struct bach_cmd cmd_report = {
	.name = "report",
	.run = run,
	.summary = "one self-contained HTML page about a capture",
};
