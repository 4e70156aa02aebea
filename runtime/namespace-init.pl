# The first process inside an attempt's namespaces, as Perl: the same protocol as namespace-init.cjs (whose header
# says what an init does), in a process that starts in ~3 ms with ~7 MB, where a Node start takes ~30 ms and ~40 MB
# (issue 13). It needs only Perl itself (Debian's `perl-base`, Essential: on every Debian and Ubuntu system) and loads
# no module but `strict` (Errno and Config only on an error path): no JSON, so the command line and the launch
# message carry none (see below). The harness uses it when the probe's trial ran it (`--trial`), and the Node init
# otherwise.
#
# It differs from the Node init in three ways that do not show outside:
#   - the loopback is brought up with two ioctls (SIOCGIFFLAGS, SIOCSIFFLAGS), not by starting `ip`;
#   - the engine's exit is seen through a pidfd (Linux 5.3+; a 20 ms poll without one), so no signal handler races
#     the select loop; as PID 1 it also reaps the orphans the engine leaves;
#   - a forwarded connection keeps its half-close (shutdown) on the engine's side.
# It writes nothing to stdout or stderr (the engine's stream), sends with MSG_NOSIGNAL instead of ignoring SIGPIPE
# (an ignored signal would be inherited by the engine), and resets the signals it touched before the exec.
#
# argv: namespace-init.pl <lifeline> <token> <loopback: "-" to leave it down, else anything> <harden: "-" or
#       "<prctl>,<unshare>"> <forward count> [<port> <channel>]...
#    The lifeline and each channel are "fd:N", a descriptor the harness passed (split-stream attempts), or a Unix
#    socket's path (PTY and `script` attempts, whose init starts in a terminal and inherits nothing), connected once
#    at the start. Either way it exists before the engine does, and no process of the attempt can reach it: the
#    harness removes the paths once the init is connected, before it sends the launch message. A forward carries
#    every connection to its port over its channel, framed (model-channel.cjs says how).
#    The first line on the lifeline, and on a channel connected by path, is "hello <token>": the harness takes no
#    other connection for the init's.
#    harden: this architecture's syscall numbers of prctl and unshare. The init makes itself undumpable (no process
#    of the attempt can trace it, read its memory or take its descriptors: the engine has no capability in the
#    init's user namespace, since it runs in one of its own, nested below).
#    or namespace-init.pl --trial <harden> (bring the loopback up, harden as an attempt would, exit 0: the probe's trial)
# launch: "launch <file> <cwd> <arg count> <arg>... <env count> <NAME=value>...\n", every string as hex of its UTF-8
# reports: JSON lines, {"type":"started","pid"} {"type":"exit","code","signal"} {"type":"error","stage","message","code"}
use strict;

# No modules: loading Socket, POSIX and the rest took ~12 ms of a ~14 ms start (they load Carp, warnings, Exporter),
# so the constants are Linux's own, the same on every architecture Node runs on (x64, arm64, arm, ppc64le, s390x),
# written as constant subs (`use constant` alone costs ~2.5 ms). `warnings` is left out too: a warning would go to
# the engine's stderr.
sub AF_UNIX () { 1 }
sub AF_INET () { 2 }
sub SOCK_STREAM () { 1 }
sub SOCK_DGRAM () { 2 }
sub SOL_SOCKET () { 1 }
sub SO_REUSEADDR () { 2 }
sub IPPROTO_TCP () { 6 }
sub TCP_NODELAY () { 1 }
sub MSG_NOSIGNAL () { 0x4000 }
sub SHUT_WR () { 1 }
sub F_GETFL () { 3 }
sub F_SETFL () { 4 }
sub O_NONBLOCK () { 0x800 }
sub WNOHANG () { 1 }
sub EINTR () { 4 }
sub EAGAIN () { 11 }
sub SIOCGIFFLAGS () { 0x8913 }
sub SIOCSIFFLAGS () { 0x8914 }
sub IFF_UP () { 0x1 }
sub F_SETFD () { 2 }
sub FD_CLOEXEC () { 1 }
sub PR_SET_DUMPABLE () { 4 }
sub CLONE_NEWUSER () { 0x10000000 }
sub PIDFD_OPEN () { 434 }  # the same number on every architecture (added after the syscall tables were unified)
# The model channel's frames (model-channel.cjs): types, header size, each direction's credit, largest DATA.
sub M_OPEN () { 1 }
sub M_DATA () { 2 }
sub M_EOF () { 3 }
sub M_CLOSE () { 4 }
sub M_CREDIT () { 5 }
sub M_HEADER () { 9 }
sub M_WINDOW () { 262144 }
sub M_MAX_DATA () { 65536 }

sub sockaddr_un { return pack('S Z108', AF_UNIX, $_[0]) }
sub sockaddr_loopback { return pack('S n C4 x8', AF_INET, $_[0], 127, 0, 0, 1) }

sub loopback_up {
  socket(my $socket, AF_INET, SOCK_DGRAM, 0) or die "socket: $!\n";
  my $request = pack('a16 x24', 'lo');    # struct ifreq: the name, then a union (40 bytes in all)
  ioctl($socket, SIOCGIFFLAGS, $request) or die "SIOCGIFFLAGS lo: $!\n";
  my $flags = unpack('x16 s', $request);
  ioctl($socket, SIOCSIFFLAGS, pack('a16 s x22', 'lo', $flags | IFF_UP)) or die "SIOCSIFFLAGS lo: $!\n";
  close $socket;
}

# "<prctl>,<unshare>" as numbers, or undef ("-").
sub parse_harden {
  my ($spec) = @_;
  return undef unless defined $spec && $spec =~ /^(\d+),(\d+)$/;
  return { prctl => $1 + 0, unshare => $2 + 0 };
}

sub write_file {
  my ($file, $text) = @_;
  open(my $handle, '>', $file) or return 0;
  print $handle $text or return 0;
  return close $handle;
}

# In a forked child before the exec: a user namespace of its own, nested below the init's, where it is root as
# before (uid and gid 0 map to the init's 0) but holds no capability over the init's namespaces or the init.
sub own_user_namespace {
  my ($harden) = @_;
  syscall($harden->{unshare}, CLONE_NEWUSER) == 0 or return 0;
  return write_file('/proc/self/setgroups', 'deny') && write_file('/proc/self/uid_map', "0 0 1\n") && write_file('/proc/self/gid_map', "0 0 1\n");
}

sub undumpable {
  my ($harden) = @_;
  return syscall($harden->{prctl}, PR_SET_DUMPABLE, 0) == 0;
}

if (@ARGV && $ARGV[0] eq '--trial') {
  eval { loopback_up(); 1 } or do { print STDERR $@; exit 1 };
  if (my $harden = parse_harden($ARGV[1])) {
    undumpable($harden) or do { print STDERR "prctl(PR_SET_DUMPABLE): $!\n"; exit 1 };
    my $pid = fork() // do { print STDERR "fork: $!\n"; exit 1 };
    if ($pid == 0) { exit(own_user_namespace($harden) ? 0 : 1) }
    waitpid($pid, 0);
    if ($? != 0) { print STDERR "a nested user namespace could not be made\n"; exit 1 }
  }
  exit 0;
}

my ($lifeline_spec, $token, $loopback, $harden_spec, $forward_count, @rest) = @ARGV;
my $harden = parse_harden($harden_spec);
my @forwards = map { [ shift @rest, shift @rest ] } 1 .. ($forward_count // 0);

sub json_string {
  my ($text) = @_;
  $text =~ s/(["\\])/\\$1/g;
  $text =~ s/([\x00-\x1f\x7f-\xff])/sprintf('\\u%04x', ord $1)/ge;
  return qq("$text");
}

# A descriptor the harness passed ("fd:N", kept from the engine by close-on-exec), or a connection to a path.
sub open_channel {
  my ($spec) = @_;
  my $handle;
  if ($spec =~ /^fd:(\d+)$/) {
    open($handle, '+<&=', $1) or return undef;
    fcntl($handle, F_SETFD, FD_CLOEXEC) or return undef;
    return $handle;
  }
  socket($handle, AF_UNIX, SOCK_STREAM, 0) or return undef;
  connect($handle, sockaddr_un($spec)) or return undef;
  return $handle;
}

my $lifeline = open_channel($lifeline_spec) // exit 137;

sub report {
  my ($json) = @_;
  my $line = "$json\n";
  while (length $line) {
    my $sent = send($lifeline, $line, MSG_NOSIGNAL);
    if (!defined $sent) {
      next if $! == EINTR;
      return;
    }
    substr($line, 0, $sent, '');
  }
}

report("hello $token");

sub finish {
  my ($code) = @_;
  shutdown($lifeline, SHUT_WR);
  exit $code;
}

sub fail {
  my ($stage, $message, $code) = @_;
  report(sprintf('{"type":"error","stage":%s,"message":%s,"code":%s}', json_string($stage), json_string($message), defined $code ? json_string($code) : 'null'));
  finish(126);
}

# An errno's name (ENOENT), as Node reports a spawn error; Errno is loaded only on this path.
# (Not through %!: naming that hash anywhere loads Errno when the script is compiled.)
sub errno_name {
  my ($number) = @_;
  require Errno;
  no strict 'refs';
  for my $name (grep { /^E[A-Z0-9]+$/ } @Errno::EXPORT_OK) {
    return $name if eval { &{"Errno::$name"}() } == $number;
  }
  return undef;
}

# A signal's name (SIGTERM); Config is loaded only when the engine died of one.
sub signal_name {
  my ($number) = @_;
  require Config;
  my $name = (split ' ', $Config::Config{sig_name})[$number];
  return 'SIG' . ($name // $number);
}

sub nonblocking {
  my ($handle) = @_;
  my $flags = fcntl($handle, F_GETFL, 0) or return;
  fcntl($handle, F_SETFL, $flags | O_NONBLOCK);
}

if ($harden) {
  undumpable($harden) or fail('harden', "prctl(PR_SET_DUMPABLE): $!", errno_name($! + 0));
}

if ($loopback ne '-') {
  eval { loopback_up(); 1 } or do { my $why = $@; chomp $why; fail('loopback', $why, undef) };
}

my @listeners;
for my $forward (@forwards) {
  my ($port, $spec) = @$forward;
  my $listener;
  my $handle = open_channel($spec) // fail('forward', "channel $spec: $!", errno_name($! + 0));
  nonblocking($handle);
  my $channel = { handle => $handle, out => $spec =~ /^fd:/ ? '' : "hello $token\n", in => '', streams => {}, next_id => 1 };
  socket($listener, AF_INET, SOCK_STREAM, 0) or fail('forward', "socket: $!", errno_name($! + 0));
  setsockopt($listener, SOL_SOCKET, SO_REUSEADDR, 1);
  bind($listener, sockaddr_loopback($port)) or fail('forward', "listen 127.0.0.1:$port: $!", errno_name($! + 0));
  listen($listener, 511) or fail('forward', "listen 127.0.0.1:$port: $!", errno_name($! + 0));
  nonblocking($listener);
  push @listeners, { handle => $listener, channel => $channel };
}

my $received = '';
my @launches;
my $engine_pid;
my $engine_pidfd;
my $engine_status;

sub decode { return pack('H*', $_[0] // '') }

sub take_lines {
  while ((my $newline = index($received, "\n")) >= 0) {
    my $line = substr($received, 0, $newline);
    substr($received, 0, $newline + 1, '');
    my @fields = split / /, $line;
    next unless @fields && $fields[0] eq 'launch';
    shift @fields;
    my $file = decode(shift @fields);
    my $cwd = decode(shift @fields);
    my @args = map { decode(shift @fields) } 1 .. (shift(@fields) // 0);
    my @env = map { decode(shift @fields) } 1 .. (shift(@fields) // 0);
    push @launches, { file => $file, cwd => $cwd, args => \@args, env => \@env };
  }
}

sub read_lifeline {
  my $read = sysread($lifeline, my $chunk, 65536);
  if (!defined $read) {
    return if $! == EINTR || $! == EAGAIN;
    exit 137;
  }
  exit 137 if $read == 0;    # the harness is gone: everything in the namespace goes with this process
  $received .= $chunk;
  take_lines();
}

# In the forked child: every descriptor above stdio that the engine would inherit is closed. This init's own are
# close-on-exec already; the others came from whatever started the harness (a CI runner's, a terminal's), which
# are the host's and none of the engine's business. `keep` is the child's pipe to the init, close-on-exec too.
sub close_inherited {
  my ($keep) = @_;
  opendir(my $dir, '/proc/self/fd') or return;
  my @fds = grep { /^\d+$/ && $_ > 2 && $_ != $keep } readdir $dir;
  closedir $dir;
  for my $fd (@fds) {
    my $handle;
    close $handle if open($handle, '<&=', $fd);
  }
}

sub start_engine {
  my ($launch) = @_;
  pipe(my $exec_read, my $exec_write) or fail('spawn', "pipe: $!", errno_name($! + 0));    # close-on-exec, both
  my $pid = fork();
  fail('spawn', "fork: $!", errno_name($! + 0)) unless defined $pid;
  if ($pid == 0) {
    close $exec_read;
    $SIG{$_} = 'DEFAULT' for qw(PIPE CHLD);
    my $failed = sub { syswrite($exec_write, "$_[0] " . ($! + 0) . "\n"); exit 127 };
    own_user_namespace($harden) or $failed->('harden') if $harden;
    close_inherited(fileno $exec_write);
    chdir $launch->{cwd} or $failed->('spawn');
    %ENV = ();
    for my $entry (@{ $launch->{env} }) {
      my $equals = index($entry, '=');
      $ENV{ substr($entry, 0, $equals) } = substr($entry, $equals + 1) if $equals > 0;
    }
    exec { $launch->{file} } $launch->{file}, @{ $launch->{args} };
    $failed->('spawn');
  }
  close $exec_write;
  my $failure = '';
  1 while !defined sysread($exec_read, $failure, 64) && $! == EINTR;
  close $exec_read;
  if ($failure ne '') {
    waitpid($pid, 0);
    my ($stage, $errno) = split ' ', $failure;
    my $name = errno_name($errno + 0);
    fail('harden', 'a user namespace for the engine: ' . ($name // "errno $errno"), $name) if $stage eq 'harden';
    fail('spawn', "spawn $launch->{file} " . ($name // "errno $errno"), $name);
  }
  $engine_pid = $pid;
  my $pidfd = syscall(PIDFD_OPEN, $pid + 0, 0);
  open($engine_pidfd, '<&=', $pidfd) if $pidfd >= 0;
  report(sprintf('{"type":"started","pid":%d}', $pid));
}

sub reap {
  while ((my $pid = waitpid(-1, WNOHANG)) > 0) {
    $engine_status = $? if defined $engine_pid && $pid == $engine_pid;
  }
}

sub accept_on {
  my ($listener) = @_;
  my $channel = $listener->{channel};
  while (accept(my $inbound, $listener->{handle})) {
    setsockopt($inbound, IPPROTO_TCP, TCP_NODELAY, 1);
    nonblocking($inbound);
    my $id = $channel->{next_id}++;
    $channel->{streams}{$id} = { socket => $inbound, pending => '', credit => M_WINDOW, read_ended => 0, eof_received => 0, shut => 0, unacked => 0 };
    channel_send($channel, M_OPEN, $id);
  }
}

# The model channel (each forward's): every connection accepted is a stream of frames over it.
sub channel_send {
  my ($channel, $type, $id, $payload) = @_;
  $payload //= '';
  $channel->{out} .= pack('C N N', $type, $id, length $payload) . $payload;
}

sub read_channel {
  my ($channel) = @_;
  my $read = sysread($channel->{handle}, my $chunk, 262144);
  if (!defined $read) {
    return if $! == EINTR || $! == EAGAIN;
    exit 137;
  }
  exit 137 if $read == 0;    # the harness is gone, as when the lifeline closes
  $channel->{in} .= $chunk;
  my ($at, $length) = (0, length $channel->{in});
  while ($length - $at >= M_HEADER) {
    my ($type, $id, $size) = unpack('C N N', substr($channel->{in}, $at, M_HEADER));
    last if $length - $at < M_HEADER + $size;
    my $payload = substr($channel->{in}, $at + M_HEADER, $size);
    $at += M_HEADER + $size;
    my $stream = $channel->{streams}{$id} or next;    # dropped: what was on its way is ignored
    if ($type == M_DATA) { $stream->{pending} .= $payload }
    elsif ($type == M_EOF) { $stream->{eof_received} = 1 }
    elsif ($type == M_CLOSE) { close $stream->{socket}; delete $channel->{streams}{$id} }
    elsif ($type == M_CREDIT && $size == 4) { $stream->{credit} += unpack('N', $payload) }
  }
  substr($channel->{in}, 0, $at, '') if $at;
}

sub write_channel {
  my ($channel) = @_;
  my $sent = send($channel->{handle}, $channel->{out}, MSG_NOSIGNAL);
  if (defined $sent) { substr($channel->{out}, 0, $sent, '') }
  elsif ($! != EINTR && $! != EAGAIN) { exit 137 }
}

# Moves one stream's bytes between its connection and the channel. Returns false when it is done or dropped.
sub pump_stream {
  my ($channel, $id, $stream, $readable, $writable) = @_;
  my $socket = $stream->{socket};
  my $drop = sub {
    channel_send($channel, M_CLOSE, $id);
    close $socket;
    return 0;
  };
  if (vec($readable, fileno($socket), 1)) {
    my $read = sysread($socket, my $chunk, $stream->{credit} < M_MAX_DATA ? $stream->{credit} : M_MAX_DATA);
    if (defined $read) {
      if ($read == 0) { $stream->{read_ended} = 1; channel_send($channel, M_EOF, $id) }
      else { $stream->{credit} -= $read; channel_send($channel, M_DATA, $id, $chunk) }
    }
    elsif ($! != EINTR && $! != EAGAIN) { return $drop->() }
  }
  if (length $stream->{pending} && vec($writable, fileno($socket), 1)) {
    my $sent = send($socket, $stream->{pending}, MSG_NOSIGNAL);
    if (defined $sent) { substr($stream->{pending}, 0, $sent, ''); $stream->{unacked} += $sent }
    elsif ($! != EINTR && $! != EAGAIN) { return $drop->() }
  }
  # What was passed on is taken again: in batches, and all of it once nothing waits.
  if ($stream->{unacked} >= 32768 || ($stream->{unacked} && !length $stream->{pending})) {
    channel_send($channel, M_CREDIT, $id, pack('N', $stream->{unacked}));
    $stream->{unacked} = 0;
  }
  if ($stream->{eof_received} && !length $stream->{pending} && !$stream->{shut}) {
    shutdown($socket, SHUT_WR);
    $stream->{shut} = 1;
  }
  return 1 unless $stream->{read_ended} && $stream->{shut};
  close $socket;
  return 0;
}

while (1) {
  if (!defined $engine_pid && @launches) {
    start_engine(shift @launches);
  }
  reap();
  if (defined $engine_status) {
    my ($code, $signal) = ($engine_status >> 8, $engine_status & 127);
    my $name = $signal ? signal_name($signal) : undef;
    report(sprintf('{"type":"exit","code":%s,"signal":%s}', $signal ? 'null' : $code, defined $name ? json_string($name) : 'null'));
    finish($signal ? 128 + $signal : $code);
  }
  my ($readable, $writable) = ('', '');
  vec($readable, fileno($lifeline), 1) = 1;
  vec($readable, fileno($_->{handle}), 1) = 1 for @listeners;
  vec($readable, fileno($engine_pidfd), 1) = 1 if $engine_pidfd;
  for my $channel (map { $_->{channel} } @listeners) {
    vec($readable, fileno($channel->{handle}), 1) = 1;
    vec($writable, fileno($channel->{handle}), 1) = 1 if length $channel->{out};
    # A stream is read while it has credit, and while the channel is not backed up.
    for my $stream (values %{ $channel->{streams} }) {
      vec($readable, fileno($stream->{socket}), 1) = 1 if !$stream->{read_ended} && $stream->{credit} > 0 && length($channel->{out}) < 4 * M_WINDOW;
      vec($writable, fileno($stream->{socket}), 1) = 1 if length $stream->{pending};
    }
  }
  # Without a pidfd, the engine's exit is seen by polling (a pidfd needs Linux 5.3).
  my $timeout = defined $engine_pid && !$engine_pidfd ? 0.02 : undef;
  my $ready = select(my $can_read = $readable, my $can_write = $writable, undef, $timeout);
  next if $ready <= 0;
  read_lifeline() if vec($can_read, fileno($lifeline), 1);
  for my $listener (@listeners) {
    accept_on($listener) if vec($can_read, fileno($listener->{handle}), 1);
    my $channel = $listener->{channel};
    read_channel($channel) if vec($can_read, fileno($channel->{handle}), 1);
    for my $id (keys %{ $channel->{streams} }) {
      my $stream = $channel->{streams}{$id} or next;
      delete $channel->{streams}{$id} unless pump_stream($channel, $id, $stream, $can_read, $can_write);
    }
    write_channel($channel) if length $channel->{out};
  }
}
