from annotator.cli import main

main()
