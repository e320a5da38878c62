# Ruby's mysql2 (on libmariadb) for the driver matrix (io.sluice.drivers.DriverMatrixTest). Speaks the line protocol
# of io.sluice.drivers.ScriptedClient on stdin/stdout.
# Usage: ruby mysql2_client.rb HOST PORT USER PASSWORD DATABASE SERVER_PREPARE(0|1)
# mysql2's prepare is always server-side, so SERVER_PREPARE is ignored.
begin
  require 'mysql2'
rescue LoadError => e
  warn "mysql2 is missing (apt-get install ruby-mysql2): #{e.message}"
  exit 3
end

host, port, user, password, database = ARGV[0], ARGV[1].to_i, ARGV[2], ARGV[3], ARGV[4]
STDOUT.sync = true
sessions = {}
statements = {}

def cell(v)
  return '\N' if v.nil?
  v.to_s.tr("\t\n", '  ')
end

def rows(result)
  return if result.nil?
  result.each { |row| puts "row\t" + row.map { |v| cell(v) }.join("\t") }
end

puts "ready\tmysql2 #{Mysql2::VERSION} (#{Mysql2::Client.info[:version]}), Ruby #{RUBY_VERSION}"
STDIN.each_line do |line|
  f = line.chomp("\n").split("\t", -1)
  cmd = f[0]
  sid = f[1]
  begin
    case cmd
    when 'open'
      sessions[sid] = Mysql2::Client.new(host: host, port: port, username: user, password: password,
                                         database: database)
    when 'query'
      rows(sessions[sid].query(f[2], as: :array, cast: false))
    when 'prepare'
      statements["#{sid}/#{f[2]}"] = sessions[sid].prepare(f[3])
    when 'execute'
      rows(statements["#{sid}/#{f[2]}"].execute(*f[3..], as: :array))
    when 'close'
      statements.delete_if do |key, st|
        next false unless key.start_with?("#{sid}/")
        st.close
        true
      end
      sessions.delete(sid).close
    else
      raise ArgumentError, "unknown command #{cmd}"
    end
    puts 'ok'
  rescue Mysql2::Error => e
    puts "error\t#{e.error_number}\t#{cell(e.message)}"
  end
end
