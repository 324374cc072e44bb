// SPDX-License-Identifier: MIT
/* capture and decode, run by bach-acquire (exec_helper.c) */
#include "cmd.h"

static int run(int argc, char **argv)
{
	return exec_helper("bach-acquire", argc, argv);
}

/* help NULL: `bach help NAME` asks the binary that has it (print_help()) */
const struct bach_cmd cmd_capture = {
	.name = "capture",
	.run = run,
	.summary = "run one capture in the foreground",
};

const struct bach_cmd cmd_decode = {
	.name = "decode",
	.run = run,
	.summary = "decode a logic-analyzer capture of the bus into a trace",
};
