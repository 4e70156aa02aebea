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
#   - a forwarded connection keeps its half-close (shutdown), where Node's pipe closes both ways.
# It writes nothing to stdout or stderr (the engine's stream), sends with MSG_NOSIGNAL instead of ignoring SIGPIPE
# (an ignored signal would be inherited by the engine), and resets the signals it touched before the exec.
#
# argv: namespace-init.pl <lifeline socket> <token> <loopback: "-" to leave it down, else anything> <forward count>
#       [<port> <socket>]... [<engine file> [engine args...]]
#    (the first line on the lifeline is "hello <token>": the harness takes no other connection for the init's)
#    or namespace-init.pl --trial (bring the loopback up and exit 0: the probe's trial)
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
sub PIDFD_OPEN () { 434 }  # the same number on every architecture (added after the syscall tables were unified)
sub BUFFER_LIMIT () { 65536 }  # bytes a forwarded direction holds before it stops reading

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

if (@ARGV == 1 && $ARGV[0] eq '--trial') {
  eval { loopback_up(); 1 } or do { print STDERR $@; exit 1 };
  exit 0;
}

my ($lifeline_path, $token, $loopback, $forward_count, @rest) = @ARGV;
my @forwards = map { [ shift @rest, shift @rest ] } 1 .. ($forward_count // 0);
my @argv_engine = @rest;

sub json_string {
  my ($text) = @_;
  $text =~ s/(["\\])/\\$1/g;
  $text =~ s/([\x00-\x1f\x7f-\xff])/sprintf('\\u%04x', ord $1)/ge;
  return qq("$text");
}

socket(my $lifeline, AF_UNIX, SOCK_STREAM, 0) or exit 137;
connect($lifeline, sockaddr_un($lifeline_path)) or exit 137;

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

if ($loopback ne '-') {
  eval { loopback_up(); 1 } or do { my $why = $@; chomp $why; fail('loopback', $why, undef) };
}

my @listeners;
for my $forward (@forwards) {
  my ($port, $path) = @$forward;
  my $listener;
  socket($listener, AF_INET, SOCK_STREAM, 0) or fail('forward', "socket: $!", errno_name($! + 0));
  setsockopt($listener, SOL_SOCKET, SO_REUSEADDR, 1);
  bind($listener, sockaddr_loopback($port)) or fail('forward', "listen 127.0.0.1:$port: $!", errno_name($! + 0));
  listen($listener, 511) or fail('forward', "listen 127.0.0.1:$port: $!", errno_name($! + 0));
  nonblocking($listener);
  push @listeners, { handle => $listener, path => $path };
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

sub start_engine {
  my ($launch) = @_;
  pipe(my $exec_read, my $exec_write) or fail('spawn', "pipe: $!", errno_name($! + 0));    # close-on-exec, both
  my $pid = fork();
  fail('spawn', "fork: $!", errno_name($! + 0)) unless defined $pid;
  if ($pid == 0) {
    close $exec_read;
    $SIG{$_} = 'DEFAULT' for qw(PIPE CHLD);
    my $failed = sub { syswrite($exec_write, ($! + 0) . "\n"); exit 127 };
    chdir $launch->{cwd} or $failed->();
    %ENV = ();
    for my $entry (@{ $launch->{env} }) {
      my $equals = index($entry, '=');
      $ENV{ substr($entry, 0, $equals) } = substr($entry, $equals + 1) if $equals > 0;
    }
    exec { $launch->{file} } $launch->{file}, @{ $launch->{args} };
    $failed->();
  }
  close $exec_write;
  my $errno = '';
  1 while !defined sysread($exec_read, $errno, 64) && $! == EINTR;
  close $exec_read;
  if ($errno ne '') {
    waitpid($pid, 0);
    my $name = errno_name($errno + 0);
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

# Forwarded connections: each a pair of sockets and what is on its way from one to the other.
my @connections;

sub accept_on {
  my ($listener) = @_;
  while (accept(my $inbound, $listener->{handle})) {
    my $outbound;
    unless (socket($outbound, AF_UNIX, SOCK_STREAM, 0) && connect($outbound, sockaddr_un($listener->{path}))) {
      close $inbound;
      next;
    }
    setsockopt($inbound, IPPROTO_TCP, TCP_NODELAY, 1);
    nonblocking($_) for $inbound, $outbound;
    push @connections, { sockets => [ $inbound, $outbound ], pending => [ '', '' ], ended => [ 0, 0 ], shut => [ 0, 0 ] };
  }
}

# Moves bytes for one connection: side $from's reads go to side 1 - $from. Returns false when it is done.
sub pump {
  my ($connection, $readable, $writable) = @_;
  for my $from (0, 1) {
    my $to = 1 - $from;
    my $source = $connection->{sockets}[$from];
    if (vec($readable, fileno($source), 1)) {
      my $read = sysread($source, my $chunk, 65536);
      if (defined $read) {
        if ($read == 0) { $connection->{ended}[$from] = 1 }
        else { $connection->{pending}[$to] .= $chunk }
      }
      elsif ($! != EINTR && $! != EAGAIN) { return 0 }
    }
  }
  for my $to (0, 1) {
    my $target = $connection->{sockets}[$to];
    if (length $connection->{pending}[$to]) {
      my $sent = send($target, $connection->{pending}[$to], MSG_NOSIGNAL);
      if (defined $sent) { substr($connection->{pending}[$to], 0, $sent, '') }
      elsif ($! != EINTR && $! != EAGAIN) { return 0 }
    }
    # What one side ended is ended on the other once it is all there.
    if ($connection->{ended}[ 1 - $to ] && !length $connection->{pending}[$to] && !$connection->{shut}[$to]) {
      shutdown($target, SHUT_WR);
      $connection->{shut}[$to] = 1;
    }
  }
  return !($connection->{shut}[0] && $connection->{shut}[1]);
}

start_engine({ file => $argv_engine[0], args => [ @argv_engine[ 1 .. $#argv_engine ] ], cwd => '.', env => [ map { "$_=$ENV{$_}" } keys %ENV ] }) if @argv_engine;

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
  for my $connection (@connections) {
    for my $side (0, 1) {
      my $other = 1 - $side;
      vec($readable, fileno($connection->{sockets}[$side]), 1) = 1 if !$connection->{ended}[$side] && length($connection->{pending}[$other]) < BUFFER_LIMIT;
      vec($writable, fileno($connection->{sockets}[$side]), 1) = 1 if length $connection->{pending}[$side];
    }
  }
  # Without a pidfd, the engine's exit is seen by polling (a pidfd needs Linux 5.3).
  my $timeout = defined $engine_pid && !$engine_pidfd ? 0.02 : undef;
  my $ready = select(my $can_read = $readable, my $can_write = $writable, undef, $timeout);
  next if $ready <= 0;
  read_lifeline() if vec($can_read, fileno($lifeline), 1);
  for my $listener (@listeners) {
    accept_on($listener) if vec($can_read, fileno($listener->{handle}), 1);
  }
  @connections = grep {
    my $connection = $_;
    my $open = pump($connection, $can_read, $can_write);
    close $_ for $open ? () : @{ $connection->{sockets} };
    $open;
  } @connections;
}
