from installer import cli

raise SystemExit(cli.main())
