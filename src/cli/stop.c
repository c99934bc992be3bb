/* SIGINT and SIGTERM as a request to stop (cli.h): run and tune finish what is safe to
 * finish, release the device and write nothing. */
#include <errno.h>
#include <string.h>

#include "cli/cli.h"
#include "core/error.h"
#include "core/fileio.h"

volatile sig_atomic_t cli_stop_signal;

static void on_stop(int sig)
{
	cli_stop_signal = sig;
}

/* SA_RESTART: a driver ioctl in flight is not cut short; the flag is read between
 * runs. SA_RESETHAND: a second signal is not caught and ends the process at once. */
void cli_catch_stop(bool on)
{
	static const int signals[] = {SIGINT, SIGTERM};
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on ? on_stop : SIG_DFL;
	sa.sa_flags = SA_RESTART | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	if (on)
		cli_stop_signal = 0;
	rb_file_read_stop_flag(&cli_stop_signal); /* a wait for a pipe ends on a stop */
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		sigaction(signals[i], &sa, NULL);
}

int cli_exit_code(int err)
{
	/* bad input, and host files: the disk, permissions, a missing path; ESTALE: a tune
	 * cache of another setup; ETXTBSY: a tune cache another tune holds */
	static const int input[] = {EINVAL, ENOMEM, E2BIG, EOVERFLOW, ENOSPC, EDQUOT, EFBIG,
				    EROFS,  EACCES, EPERM, ENOENT,    EISDIR, ESTALE, ETXTBSY};

	for (size_t i = 0; i < sizeof(input) / sizeof(input[0]); i++)
		if (err == -input[i])
			return RB_EXIT_USAGE;
	if (err == -EINTR)
		return 128 + (cli_stop_signal ? cli_stop_signal : SIGINT);
	return err == 0 ? RB_EXIT_OK : err == -EFAULT ? RB_EXIT_FAIL : RB_EXIT_DEVICE;
}
