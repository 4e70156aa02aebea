# The fast client of the attempt daemon (issue 13). With the daemon on, the command's entry point (the sh
# line at the top of bin/agent-harness.js) runs this file with Perl instead of starting Node: a Perl start with no
# module loaded takes ~4 ms where Node's takes 25-80 ms (the shell's NODE_EXTRA_CA_CERTS included), and once a
# daemon runs, a client is all an attempt command needs.
#
# It serves the common case only, and leaves everything else to the command's Node client (bin/daemon-client.js),
# which it becomes by `exec node <bin> <args>`: a command that is not an attempt, `--pty`, a terminal on all three
# streams, a setting to check, no daemon directory or no daemon listening (the Node client starts one), a daemon
# that turns the command down or closes unanswered (the Node client tries again, warns or runs the attempt itself).
# Once the daemon has accepted the command, this client relays its output and signals and exits with its status,
# as the Node client does.
#
# The daemon's name is the Node client's, computed the same way from the same inputs (daemonKey in
# bin/daemon-client.js; a property test keeps the two equal): where this client cannot tell (no /proc, an
# environment that is not UTF-8, a Node found through a shim), it names no daemon and the Node client runs.
#
# Perl's built-ins only: loading Socket and POSIX alone would take ~8 ms. Linux only (the socket constants and
# address layout are Linux's, and /proc is read).
package AgentHarness::DaemonClient;

our $PROTOCOL = 1;
our @ATTEMPT_COMMANDS = qw(start resume codex claude gemini iflow opencode);
# With AGENT_HARNESS_DAEMON unset, a CI job's variables turn the daemon off (CI_VARIABLES in bin/daemon-client.js).
our @CI_VARIABLES = qw(CI CONTINUOUS_INTEGRATION BUILD_NUMBER TF_BUILD CODEBUILD_BUILD_ID);
our %FRAME = (stdout => 1, stderr => 2, exit => 3, accepted => 4, refused => 5, reply => 6);
our $MAX_SOCKET_PATH = 107;
our $DAEMON_LOST_HINT = 'The daemon that ran the attempt ended before it finished (killed, or crashed); `agent-harness runs` seals the attempt. Resume the run to continue.';

my $EINTR = 4;
# The directory of the package's bin (this file's).
my $BIN_DIR = __FILE__ =~ m{^(.*/)}s ? $1 : './';
# Set once a daemon accepted the command: from then on it is the daemon's, never run a second time here.
my $began;

# The command's entry point (the bin's path), its arguments: runs the command through a daemon, or becomes the Node
# client of bin/daemon-client.js.
sub main {
  my ($bin, @args) = @_;
  my $status = eval { through_daemon(\@args) };
  exit $status if defined $status;
  if ($began) {
    print STDERR "agent-harness: error INTERNAL: the daemon's client failed while the attempt ran: $@";
    exit 1;
  }
  $SIG{PIPE} = 'DEFAULT';
  exec { 'node' } 'node', $bin, @args;
  print STDERR "agent-harness: cannot run node: $!\n";
  exit 127;
}

# A string of characters from the bytes of `$bytes` read as UTF-8, or undef when they are not (Node would replace
# what is not, and this client cannot name Node's daemon then).
sub utf8_text {
  my ($bytes) = @_;
  return undef unless defined $bytes;
  my $text = $bytes;
  return undef unless utf8::decode($text);
  return undef if $text =~ /[\x{d800}-\x{dfff}]/ || $text =~ /[^\x{0}-\x{10ffff}]/;
  return $text;
}

# `$text` as JSON.stringify writes a string.
sub json_string {
  my ($text) = @_;
  $text =~ s/(["\\])/\\$1/g;
  $text =~ s/\x08/\\b/g;
  $text =~ s/\x0c/\\f/g;
  $text =~ s/\n/\\n/g;
  $text =~ s/\r/\\r/g;
  $text =~ s/\t/\\t/g;
  $text =~ s/([\x00-\x1f])/sprintf('\\u%04x', ord $1)/ge;
  return qq("$text");
}

# `$text` with each character past U+FFFF as its two UTF-16 surrogates: compared with `cmp`, the order of JavaScript's
# `<` on strings, by which the Node client sorts the environment.
sub utf16_order {
  my ($text) = @_;
  $text =~ s/([^\x{0}-\x{ffff}])/chr(0xd800 + ((ord($1) - 0x10000) >> 10)) . chr(0xdc00 + ((ord($1) - 0x10000) & 0x3ff))/ge;
  return $text;
}

# hash128 of bin/daemon-client.js: four 32-bit FNV-1a-style lanes over the UTF-16 code units of `$text`, each mixed,
# as 32 hex digits. `use integer` makes a product wrap as Math.imul's does (its low 32 bits are kept).
sub hash128 {
  use integer;
  my ($text) = @_;
  my @units = map { $_ > 0xffff ? (0xd800 + (($_ - 0x10000) >> 10), 0xdc00 + (($_ - 0x10000) & 0x3ff)) : $_ } unpack('W*', $text);
  my ($l0, $l1, $l2, $l3) = (0x811c9dc5, 0x01000193 ^ 0x5bd1e995, 0x9e3779b9, 0x85ebca6b);
  my ($m0, $m1, $m2, $m3) = map { (0x01000193 + $_ * 0x3c6ef372) & 0xffffffff } 0 .. 3;
  for my $code (@units) {
    $l0 = (($l0 ^ $code) * $m0) & 0xffffffff;
    $l1 = (($l1 ^ $code) * $m1) & 0xffffffff;
    $l2 = (($l2 ^ $code) * $m2) & 0xffffffff;
    $l3 = (($l3 ^ $code) * $m3) & 0xffffffff;
  }
  my $length = @units;
  my $hex = '';
  my $lane = 0;
  for my $value ($l0, $l1, $l2, $l3) {
    my $h = ($value ^ ($length + $lane)) & 0xffffffff;
    $h = (($h ^ ($h >> 16)) * 0x85ebca6b) & 0xffffffff;
    $h = (($h ^ ($h >> 13)) * 0xc2b2ae35) & 0xffffffff;
    $hex .= sprintf('%08x', ($h ^ ($h >> 16)) & 0xffffffff);
    $lane += 1;
  }
  return $hex;
}

# A file's identity in a daemon's name (fileStamp in bin/daemon-client.js): inode, size, mtime in whole seconds.
sub file_stamp {
  my @stat = stat $_[0];
  return @stat ? "$stat[1]:$stat[7]:$stat[9]" : undef;
}

# The `node` the command would start (the first in PATH, as `exec node` finds it), as file_stamp gives it.
sub node_stamp {
  for my $dir (split /:/, $ENV{PATH} // '') {
    return undef unless $dir =~ m{^/};
    my $file = "$dir/node";
    return file_stamp($file) if -f $file && -x _;
  }
  return undef;
}

# The harness's build beside the bin (the Node client's codeId): the bundle, else the unbundled entry point.
sub code_stamp {
  for my $file ("$BIN_DIR../dist/bundle/main.cjs", "$BIN_DIR../dist/cli/main.js") {
    return file_stamp($file) if -e $file;
  }
  return undef;
}

# This process's working directory, as getcwd() gives it, or undef.
sub working_directory {
  my $cwd = readlink '/proc/self/cwd';
  return undef unless defined $cwd && $cwd =~ m{^/};
  my @here = stat '.';
  my @there = stat $cwd;
  return undef unless @here && @there && $here[0] == $there[0] && $here[1] == $there[1];
  return $cwd;
}

# The umask as /proc/self/status writes it (what the Node client reads), or undef.
sub umask_text {
  open(my $status, '<', '/proc/self/status') or return undef;
  local $/;
  my $text = <$status>;
  return $text =~ /^Umask:\s*([0-7]+)$/m ? $1 : undef;
}

# The daemon's name for this process (daemonKey in bin/daemon-client.js), or undef where it cannot be told.
sub daemon_key {
  my @parts = (code_stamp(), node_stamp(), working_directory(), umask_text());
  return undef if grep { !defined } @parts;
  my ($code, $node, $cwd, $umask) = map { utf8_text($_) } @parts;
  return undef if grep { !defined } ($code, $node, $cwd, $umask);
  my %entries;
  for my $name (keys %ENV) {
    # Not `_`, as daemonKey leaves it out: bash sets it to the program it runs.
    next if $name eq '_';
    my ($key, $value) = (utf8_text($name), utf8_text($ENV{$name}));
    return undef unless defined $key && defined $value;
    $entries{$key} = '[' . json_string($key) . ',' . json_string($value) . ']';
  }
  my @entries = map { $entries{$_} } sort { utf16_order($a) cmp utf16_order($b) } keys %entries;
  my $json = "[$PROTOCOL," . json_string($code) . ',' . json_string($node) . ',[],' . json_string($cwd) . ','
    . json_string($umask) . ',[' . join(',', @entries) . ']]';
  return hash128($json);
}

# The directory of the user's daemons (daemonDirectory in bin/daemon-client.js), if it is the user's alone; undef
# when it is not there yet or not usable (the Node client makes it, or says why not).
sub daemon_directory {
  my $dir;
  if (length($ENV{AGENT_HARNESS_DAEMON_DIR} // '')) {
    $dir = $ENV{AGENT_HARNESS_DAEMON_DIR};
  } elsif (($ENV{XDG_RUNTIME_DIR} // '') =~ m{^/}) {
    $dir = "$ENV{XDG_RUNTIME_DIR}/agent-harness";
  } else {
    $dir = "/tmp/agent-harness-$<";
  }
  # path.resolve and path.join would normalize it: a path they would change is left to the Node client.
  return undef if $dir !~ m{^/} || $dir =~ m{//|/\.\.?(?:/|$)|./$};
  my @stat = lstat $dir;
  return undef unless @stat && -d _ && $stat[4] == $< && ($stat[2] & 077) == 0;
  return $dir;
}

# The first of @CI_VARIABLES set to anything but empty, false or 0 (ciVariable in bin/daemon-client.js), or undef.
sub ci_variable {
  for my $name (@CI_VARIABLES) {
    my $value = lc($ENV{$name} // '');
    $value =~ s/^\s+|\s+$//g;
    return $name unless $value eq '' || $value eq 'false' || $value eq '0';
  }
  return undef;
}

# Whether the command may run in a daemon (runsInDaemon and the settings' checks in bin/daemon-client.js).
sub wanted {
  my ($args) = @_;
  my $on = lc($ENV{AGENT_HARNESS_DAEMON} // '');
  $on =~ s/^\s+|\s+$//g;
  $on = 'on' if $on eq '' && !defined ci_variable();
  return 0 unless $on eq 'on' || $on eq '1';
  my $idle = $ENV{AGENT_HARNESS_DAEMON_IDLE_MS};
  return 0 if defined $idle && $idle =~ /\S/ && $idle !~ /^\s*[1-9][0-9]{0,14}\s*$/;
  return 0 unless @$args && grep { $_ eq $args->[0] } @ATTEMPT_COMMANDS;
  return 0 if grep { $_ eq '--pty' } @$args;
  return 0 if -t STDIN && -t STDOUT && -t STDERR;
  return 1;
}

# Writes all of `$bytes` to `$handle`; false when the reader went away.
sub write_all {
  my ($handle, $bytes) = @_;
  my $offset = 0;
  while ($offset < length $bytes) {
    my $written = syswrite($handle, $bytes, length($bytes) - $offset, $offset);
    if (defined $written) {
      $offset += $written;
    } elsif ($! != $EINTR) {
      return 0;
    }
  }
  return 1;
}

# Runs the attempt command in its daemon; its exit status, or undef when no daemon took it.
sub through_daemon {
  my ($args) = @_;
  return undef unless $^O eq 'linux' && wanted($args);
  my $dir = daemon_directory() // return undef;
  my $key = daemon_key() // return undef;
  my $path = "$dir/$key.sock";
  return undef if length($path) > $MAX_SOCKET_PATH;
  my @argv = map { utf8_text($_) } @$args;
  return undef if grep { !defined } @argv;
  my $request = qq({"v":$PROTOCOL,"key":"$key","argv":[) . join(',', map { json_string($_) } @argv) . "]}\n";
  utf8::encode($request);

  # AF_UNIX and SOCK_STREAM are 1 on Linux; the address is the family (a native u16), then the path.
  socket(my $socket, 1, 1, 0) or return undef;
  connect($socket, pack('S', 1) . $path . "\0") or return undef;
  local $SIG{PIPE} = 'IGNORE';
  write_all($socket, $request) or return undef;

  my ($accepted, $status, $stale, $buffer) = (undef, undef, 0, '');
  my %closed;
  my $relay = sub {
    my ($fd, $payload) = @_;
    my $handle = $fd == 1 ? \*STDOUT : \*STDERR;
    # A reader that went away (`... | head`) is not the attempt's end: the rest is dropped, the attempt sealed.
    $closed{$fd} = 1 unless $closed{$fd} || write_all($handle, $payload);
  };
  my $forward = sub {
    my ($name) = @_;
    write_all($socket, qq({"signal":"$name"}\n));
  };
  while (1) {
    my $read = sysread($socket, $buffer, 65536, length $buffer);
    if (!defined $read) {
      next if $! == $EINTR;
      last;
    }
    last if $read == 0;
    while (length($buffer) >= 5) {
      my ($type, $length) = unpack('C N', $buffer);
      last if length($buffer) < 5 + $length;
      my $payload = substr($buffer, 5, $length);
      substr($buffer, 0, 5 + $length, '');
      if ($type == $FRAME{stdout}) {
        $relay->(1, $payload);
      } elsif ($type == $FRAME{stderr}) {
        $relay->(2, $payload);
      } elsif ($type == $FRAME{accepted}) {
        $accepted = $payload =~ /"pid":(\d+)/ ? $1 : '?';
        $began = 1;
        # Passed on, as the Node client does: the daemon stops the engine and seals the audit.
        $SIG{INT} = sub { $forward->('SIGINT') };
        $SIG{TERM} = sub { $forward->('SIGTERM') };
      } elsif ($type == $FRAME{refused}) {
        $stale = $payload =~ /"stale":true/;
      } elsif ($type == $FRAME{exit}) {
        $status = $payload =~ /"status":(\d+)/ ? $1 : 1;
      }
    }
  }
  close $socket;
  return $status if defined $status;
  # Turned down, or closed unanswered, before the command began: the Node client takes it from here. A daemon whose
  # sources changed since it started is ending: the Node client runs the new code in its own process, as it does
  # when told so itself.
  if (!defined $accepted) {
    $ENV{AGENT_HARNESS_DAEMON} = 'off' if $stale;
    return undef;
  }
  print STDERR "agent-harness: error DAEMON_LOST: the daemon (pid $accepted) ended before the attempt finished; its audit is sealed by the next `agent-harness runs`.\n  hint: $DAEMON_LOST_HINT\n";
  return 1;
}

1;
