# Perl's DBI with DBD::MariaDB (on libmariadb) for the driver matrix (io.sluice.drivers.DriverMatrixTest). Speaks
# the line protocol of io.sluice.drivers.ScriptedClient on stdin/stdout.
# Usage: perl dbd_mariadb.pl HOST PORT USER PASSWORD DATABASE SERVER_PREPARE(0|1)
# SERVER_PREPARE=1 sets mariadb_server_prepare (DBD::MariaDB quotes parameters on the client by default); plain
# statements always go as text.
use strict;
use warnings;

BEGIN {
    eval { require DBI; require DBD::MariaDB; 1 } or do {
        print STDERR "DBD::MariaDB is missing (apt-get install libdbd-mariadb-perl): $@";
        exit 3;
    };
}

my ($host, $port, $user, $password, $database, $server_prepare) = @ARGV;
$| = 1;
my %sessions;
my %statements;

sub cell {
    my ($v) = @_;
    return '\N' unless defined $v;
    $v =~ tr/\t\n/  /;
    return $v;
}

sub fetch_rows {
    my ($sth) = @_;
    return unless $sth->{NUM_OF_FIELDS};
    while (my $row = $sth->fetchrow_arrayref) {
        print "row\t", join("\t", map { cell($_) } @$row), "\n";
    }
}

sub fail {
    my ($h) = @_;
    my $code = $h->err // 0;
    print "error\t", ($code =~ /^\d+$/ ? $code : 0), "\t", cell($h->errstr // 'error'), "\n";
}

print "ready\tDBD::MariaDB $DBD::MariaDB::VERSION, DBI $DBI::VERSION, Perl ", sprintf('%vd', $^V), "\n";
while (my $line = <STDIN>) {
    chomp $line;
    my @f = split /\t/, $line, -1;
    my ($cmd, $sid) = @f;
    if ($cmd eq 'open') {
        my $dbh = DBI->connect("DBI:MariaDB:database=$database;host=$host;port=$port", $user, $password,
            { RaiseError => 0, PrintError => 0, AutoCommit => 1, mariadb_server_prepare => $server_prepare ? 1 : 0 });
        if (!$dbh) {
            my $code = $DBI::err // 0;
            print "error\t", ($code =~ /^\d+$/ ? $code : 0), "\t", cell($DBI::errstr // 'connect failed'), "\n";
            next;
        }
        $sessions{$sid} = $dbh;
        print "ok\n";
    } elsif ($cmd eq 'query') {
        my $dbh = $sessions{$sid};
        my $sth = $dbh->prepare($f[2], { mariadb_server_prepare => 0 });
        if (!$sth || !defined $sth->execute) {
            fail($sth // $dbh);
            next;
        }
        fetch_rows($sth);
        $sth->finish;
        print "ok\n";
    } elsif ($cmd eq 'prepare') {
        my $dbh = $sessions{$sid};
        my $sth = $dbh->prepare($f[3]);
        if (!$sth) {
            fail($dbh);
            next;
        }
        $statements{"$sid/$f[2]"} = $sth;
        print "ok\n";
    } elsif ($cmd eq 'execute') {
        my $sth = $statements{"$sid/$f[2]"};
        if (!defined $sth->execute(@f[3 .. $#f])) {
            fail($sth);
            next;
        }
        fetch_rows($sth);
        $sth->finish;
        print "ok\n";
    } elsif ($cmd eq 'close') {
        delete $statements{$_} for grep { index($_, "$sid/") == 0 } keys %statements;
        (delete $sessions{$sid})->disconnect;
        print "ok\n";
    } else {
        print "error\t0\tunknown command $cmd\n";
    }
}
$_->disconnect for values %sessions;
