#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Check that iopa's ioctl type (IOPA_IOC_MAGIC in uapi/linux/iopa.h), with
# sequence numbers SEQ_LO..SEQ_HI, overlaps no range registered in the
# kernel's Documentation/userspace-api/ioctl/ioctl-number.rst.
#
#   tools/check/ioctl-number.sh [HEADER [IOCTL_NUMBER_RST]]
#
# Defaults: uapi/linux/iopa.h and the copy fetch-ksrc.sh extracts.  Prints
# every conflicting table line; exits 1 on a conflict (or on a command number
# outside SEQ_LO..SEQ_HI), 2 on a parse error.
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
HDR=${1:-$TOP/uapi/linux/iopa.h}
RST=${2:-}
SEQ_LO=${SEQ_LO:-0x00}
SEQ_HI=${SEQ_HI:-0x3F}
if [ -z "$RST" ]; then
	KSRC=$("$TOP/tools/guest/fetch-ksrc.sh")
	RST=$KSRC/Documentation/userspace-api/ioctl/ioctl-number.rst
fi

exec perl -e '
use strict; use warnings;
my ($hdr, $rst, $lo, $hi) = @ARGV;
$lo = hex($lo); $hi = hex($hi);

# Value of a code cell: 0xNN, or a character constant like '"'"'X'"'"'.
sub code_val {
	my ($s) = @_;
	return hex($1) if $s =~ /^0x([0-9A-Fa-f]{1,2})$/;
	return ord($1) if $s =~ /^\x27(\\?.)\x27$/ and length($1) == 1;
	return ord(substr($1, 1)) if $s =~ /^\x27(\\.)\x27$/;
	return undef;
}

open(my $h, "<", $hdr) or die "$hdr: $!\n";
my ($magic, $outside) = (undef, 0);
while (<$h>) {
	$magic = $1 if /^\s*#\s*define\s+IOPA_IOC_MAGIC\s+(\S+)/;
	# Every command number must lie in the range checked below.
	while (/\bIOPA_IOC_MAGIC\s*,\s*(0x[0-9A-Fa-f]+|\d+)/g) {
		my $v = $1;
		my $n = $v =~ /^0x/ ? hex($v) : $v;
		next if $n >= $lo && $n <= $hi;
		printf "%s:%d: sequence number %s outside 0x%02X-0x%02X\n",
			$hdr, $., $v, $lo, $hi;
		$outside++;
	}
}
close($h);
defined $magic or do { print "no IOPA_IOC_MAGIC in $hdr\n"; exit 2 };
my $mval = code_val($magic);
defined $mval or do { print "cannot parse IOPA_IOC_MAGIC $magic\n"; exit 2 };

open(my $r, "<", $rst) or die "$rst: $!\n";
my ($rows, $bad, $intable) = (0, 0, 0);
my %taken;
while (my $line = <$r>) {
	chomp $line;
	# The table is framed by "====  =====  ..." rules; data rows start in
	# column 0 with the code, then the sequence range.
	if ($line =~ /^====\s+=====/) { $intable++; next; }
	next unless $intable >= 2 && $intable < 3;
	next unless $line =~ /^(\S+)\s+(\S+)/;
	my ($code, $seq) = ($1, $2);
	my $cv = code_val($code);
	if (!defined $cv) { print "unparsed row: $line\n"; next; }
	$rows++;
	$taken{$cv} = 1;
	my ($slo, $shi);
	if (lc $seq eq "all") { ($slo, $shi) = (0, 255); }
	elsif ($seq =~ /^([0-9A-Fa-f]{1,2})-([0-9A-Fa-f]{1,2})$/) {
		($slo, $shi) = (hex($1), hex($2));
	} elsif ($seq =~ /^([0-9A-Fa-f]{1,2})$/) { ($slo, $shi) = (hex($1), hex($1)); }
	else { ($slo, $shi) = (0, 255); }	# no usable range: assume all
	next unless $cv == $mval && $slo <= $hi && $shi >= $lo;
	printf "conflict: %s\n", $line;
	$bad++;
}
close($r);
$rows > 100 or do { print "only $rows table rows parsed from $rst\n"; exit 2 };
printf "IOPA_IOC_MAGIC %s, seq 0x%02X-0x%02X: %s (%d rows checked)\n",
	$magic, $lo, $hi, $bad ? "$bad conflict(s)" : "free", $rows;
if ($bad) {
	# Suggest codes that have no registered range at all.
	my @free = grep { !$taken{$_} } (0x80 .. 0xFF);
	printf "codes with no registered range: %s\n",
		join(" ", map { sprintf("0x%02X", $_) } @free);
}
exit($bad || $outside ? 1 : 0);
' "$HDR" "$RST" "$SEQ_LO" "$SEQ_HI"
